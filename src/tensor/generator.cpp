#include "tenferro/tensor/generator.hpp"

#include <random>

namespace tenferro {

struct Generator::Engine {
  std::mt19937_64 rng;
  std::normal_distribution<double> normal{0.0, 1.0};
};

Generator::Generator(std::uint64_t seed) : seed_(seed), engine_(std::make_unique<Engine>()) {
  engine_->rng.seed(seed);
}
Generator::Generator(const Generator& other)
    : seed_(other.seed_), engine_(std::make_unique<Engine>(*other.engine_)) {}
Generator& Generator::operator=(const Generator& other) {
  if (this != &other) {
    seed_ = other.seed_;
    engine_ = std::make_unique<Engine>(*other.engine_);
  }
  return *this;
}
Generator::Generator(Generator&&) noexcept = default;
Generator& Generator::operator=(Generator&&) noexcept = default;
Generator::~Generator() = default;

void Generator::reseed(std::uint64_t seed) {
  seed_ = seed;
  engine_->rng.seed(seed);
  engine_->normal.reset();
}
double Generator::uniform() {
  // 53 random bits -> [0, 1).
  return static_cast<double>(engine_->rng() >> 11) * 0x1.0p-53;
}
double Generator::normal() {
  return engine_->normal(engine_->rng);
}
std::uint64_t Generator::next_u64() {
  return engine_->rng();
}

}  // namespace tenferro
