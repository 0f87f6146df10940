#include "tenferro/backend/backend.hpp"

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace tenferro {

struct Backend::Attachments {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<void>, std::less<>> items;
};

Backend::Backend() : attachments_(std::make_unique<Attachments>()) {}

Backend::~Backend() {
  release_attachments();
}

std::shared_ptr<void> Backend::attachment(std::string_view key,
                                          const std::function<std::shared_ptr<void>()>& make) {
  {
    std::lock_guard<std::mutex> lock(attachments_->mutex);
    auto it = attachments_->items.find(key);
    if (it != attachments_->items.end()) return it->second;
  }
  // Made outside the lock: make() may itself use this backend.
  std::shared_ptr<void> made = make();
  std::lock_guard<std::mutex> lock(attachments_->mutex);
  auto [it, inserted] = attachments_->items.try_emplace(std::string(key), std::move(made));
  return it->second;
}

void Backend::release_attachments() {
  std::map<std::string, std::shared_ptr<void>, std::less<>> items;
  {
    std::lock_guard<std::mutex> lock(attachments_->mutex);
    items.swap(attachments_->items);
  }
  items.clear();  // outside the lock: a destructor may use the backend
}

std::string_view name(BackendKind k) {
  switch (k) {
    case BackendKind::Cpu:
      return "cpu";
    case BackendKind::Cuda:
      return "cuda";
  }
  return "?";
}

}  // namespace tenferro
