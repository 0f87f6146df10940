// Communicators, meshes, shard layouts, traffic counters and the collective
// agreement on errors (distributed.hpp, internal.hpp).

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "distributed/internal.hpp"

namespace tenferro::dist {

namespace detail {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  fail(ErrorKind::Internal, what, "MPI error ", rc, ": ",
       std::string(text, static_cast<std::size_t>(len)));
}

void agree(MPI_Comm comm, const std::optional<Error>& local) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  int mine = local ? me : INT_MAX;
  int first = INT_MAX;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "agree");
  if (first == INT_MAX) return;
  // The first failing rank's kind, op and message, to every rank.
  int kind = local && first == me ? static_cast<int>(local->kind()) : 0;
  std::string text;
  if (local && first == me) {
    text.append(local->op());
    text.push_back('\n');
    text.append(local->message());
  }
  int len = static_cast<int>(text.size());
  check_mpi(MPI_Bcast(&kind, 1, MPI_INT, first, comm), "agree");
  check_mpi(MPI_Bcast(&len, 1, MPI_INT, first, comm), "agree");
  text.resize(static_cast<std::size_t>(len));
  check_mpi(MPI_Bcast(text.data(), len, MPI_CHAR, first, comm), "agree");
  const auto cut = text.find('\n');
  const std::string op = text.substr(0, cut);
  const std::string message = cut == std::string::npos ? std::string() : text.substr(cut + 1);
  throw Error(static_cast<ErrorKind>(kind), op,
              message + " (on rank " + std::to_string(first) + "; every rank raises this error)");
}

namespace {
std::atomic<std::uint64_t> g_bytes{0};
std::atomic<std::uint64_t> g_collectives{0};
}  // namespace

void count_sent(std::uint64_t bytes) {
  g_bytes += bytes;
  ++g_collectives;
}

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::Bool:
      return MPI_C_BOOL;
    case DType::I32:
      return MPI_INT32_T;
    case DType::I64:
      return MPI_INT64_T;
    case DType::F32:
      return MPI_FLOAT;
    case DType::F64:
      return MPI_DOUBLE;
    case DType::C64:
      return MPI_C_FLOAT_COMPLEX;
    case DType::C128:
      return MPI_C_DOUBLE_COMPLEX;
  }
  return MPI_BYTE;
}

std::uint64_t comm_key(MPI_Comm comm) {
  static std::mutex mutex;
  static std::map<MPI_Comm, std::uint64_t> keys;
  std::lock_guard lock(mutex);
  auto [it, inserted] = keys.try_emplace(comm, keys.size() + 1);
  return it->second;
}

}  // namespace detail

namespace {
bool g_we_initialized = false;
void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}
}  // namespace

void ensure_initialized() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  detail::check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided),
                    "MPI_Init_thread");
  if (!g_we_initialized) {
    g_we_initialized = true;
    std::atexit(finalize_at_exit);
  }
}

Communicator Communicator::world() {
  ensure_initialized();
  return Communicator(MPI_COMM_WORLD);
}

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  ensure_initialized();
  if (comm == MPI_COMM_NULL) {
    fail(ErrorKind::InvalidArgument, "communicator", "MPI_COMM_NULL is not a communicator");
  }
  // Errors come back as codes (check_mpi turns them into tenferro::Error).
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  detail::check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
  detail::check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
}

Communicator Communicator::split(int color, int key) const {
  MPI_Comm out = MPI_COMM_NULL;
  detail::check_mpi(MPI_Comm_split(comm_, color, key, &out), "MPI_Comm_split");
  // Split communicators live until MPI_Finalize: a freed communicator's
  // handle can come back for a new one, and ops keyed by handle (plan
  // caches, traced programs) would then talk to the wrong group of ranks.
  static std::mutex mutex;
  static std::vector<MPI_Comm> kept;
  {
    std::lock_guard lock(mutex);
    kept.push_back(out);
  }
  return Communicator(out);
}

void Communicator::barrier() const {
  detail::check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
}

Mesh::Mesh(Communicator comm, std::vector<int> shape)
    : comm_(std::move(comm)), shape_(std::move(shape)) {
  if (shape_.empty() || shape_.size() > 2) {
    fail(ErrorKind::InvalidArgument, "mesh", "a mesh has 1 or 2 axes, got ", shape_.size());
  }
  long long product = 1;
  for (const int s : shape_) {
    if (s < 1) fail(ErrorKind::InvalidArgument, "mesh", "mesh extents are positive, got ", s);
    product *= s;
  }
  if (product != comm_.size()) {
    fail(ErrorKind::InvalidArgument, "mesh", "a ", to_string(), " mesh has ", product,
         " ranks but the communicator has ", comm_.size(),
         "; start as many processes (mpirun -np) or pick another mesh shape");
  }
  const int r = comm_.rank();
  if (shape_.size() == 1) {
    coords_ = {r};
    axis_comms_ = {comm_};
  } else {
    coords_ = {r / shape_[1], r % shape_[1]};
    // Axis 0 varies the row index: ranks with the same column.
    axis_comms_ = {comm_.split(coords_[1], coords_[0]), comm_.split(coords_[0], coords_[1])};
  }
}

Mesh Mesh::line(Communicator comm) {
  const int n = comm.size();
  return Mesh(std::move(comm), {n});
}

std::string Mesh::to_string() const {
  std::string s;
  for (std::size_t k = 0; k < shape_.size(); ++k) {
    if (k > 0) s.push_back('x');
    s.append(std::to_string(shape_[k]));
  }
  return s;
}

std::string Placement::to_string() const {
  switch (kind) {
    case Kind::Shard:
      return "Shard(" + std::to_string(axis) + (block ? ", " + std::to_string(block) : "") + ")";
    case Kind::Replicate:
      return "Replicate()";
    case Kind::Partial:
      break;
  }
  return "Partial()";
}

std::vector<std::int64_t> shard_indices(std::int64_t n, int parts, int rank, std::int64_t block) {
  std::vector<std::int64_t> idx;
  if (block <= 0) {
    const std::int64_t base = n / parts, extra = n % parts;
    const std::int64_t start = rank * base + std::min<std::int64_t>(rank, extra);
    const std::int64_t len = base + (rank < extra ? 1 : 0);
    for (std::int64_t i = 0; i < len; ++i) idx.push_back(start + i);
    return idx;
  }
  for (std::int64_t b = rank; b * block < n; b += parts) {
    for (std::int64_t i = b * block; i < std::min(n, (b + 1) * block); ++i) idx.push_back(i);
  }
  return idx;
}

std::int64_t shard_extent(std::int64_t n, int parts, int rank, std::int64_t block) {
  if (block <= 0) return n / parts + (rank < n % parts ? 1 : 0);
  std::int64_t count = 0;
  for (std::int64_t b = rank; b * block < n; b += parts)
    count += std::min(n, (b + 1) * block) - b * block;
  return count;
}

CommStats comm_stats() {
  return {detail::g_bytes.load(), detail::g_collectives.load()};
}

void reset_comm_stats() {
  detail::g_bytes = 0;
  detail::g_collectives = 0;
}

}  // namespace tenferro::dist
