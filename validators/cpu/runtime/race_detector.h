// cudashim race detector (the `race` build variant, CUDASHIM_RACE): lost updates between CUDA
// threads that no barrier, warp synchronisation, atomic or fence orders.
//
// Threads of a block never interleave between barriers in the emulator, so a non-atomic
// read-modify-write by many threads on one location (`hist[b]++`, a check-then-store maximum)
// computes the right answer under every schedule and passes; on a GPU the updates are lost.
// This build compiles the program with GCC's ThreadSanitizer instrumentation but links no
// ThreadSanitizer runtime: the `__tsan_*` entry points below are ours. Only accesses made while a
// CUDA thread runs are judged (host code, OpenMP host threads and the runtime are never
// instrumented or are ignored), and the emulator's own knowledge gives the ordering:
//
// - two writes to one address conflict when they come from different CUDA threads of one
//   launch and
//   * same block: no __syncthreads() (or grid.sync()) completed between them, the two threads
//     are not lanes of one warp that took part in a warp operation (__syncwarp, a shuffle, a
//     vote, ...) after the first write, and not both threads performed an atomic or a fence
//     after the first write (a lock handed over, a flag published);
//   * different blocks (global memory only: shared memory is per block): no grid.sync()
//     between them and no atomic or fence by any thread after the first write;
// - a conflict counts in device allocations and shared memory; elsewhere (a __device__ variable,
//   or the shim's own caches and bookkeeping in thread-local, static and heap memory) only
//   between two writes made by lines of the program's own source;
// - a conflicting write that stores the value already there is benign (every thread setting
//   `*found = 1`, or `cost[v] = level + 1` from several parents): on a GPU the outcome is the
//   same whichever thread wins. A conflicting write of a different value is reported: the
//   result depends on which thread writes last, and for a read-modify-write it is a lost update.
// - a volatile store is a relaxed atomic store in CUDA's memory model (PTX treats st.volatile
//   as st.relaxed.sys), so, like an atomic, it conflicts with nothing and orders what its thread
//   wrote before it: a flag or turn handed between threads through volatile memory
//   (`while (turn != mine); ...; turn = mine + 1;`) is no lost update;
// - Reads are not tracked: a read that races a write changes the result with the thread order,
//   which the forward/reverse schedules already expose; the detector adds the class schedules
//   cannot see. Accesses are matched by address, so writes of different sizes that overlap
//   without starting at the same byte are not compared.
//
// The first conflict ends the run (exit code 87) with a report naming the kernel, both threads,
// both source lines and the address space (shared or global memory, and which buffer).
// Launches take turns and one block runs at a time (blocks that wait for each other hand a turn
// over under a lock), so the bookkeeping needs no locks of its own.
#pragma once
#ifdef CUDASHIM_RACE

// Included inside namespace cudashim, after Worker.
namespace race {

struct Entry {
  uintptr_t addr;
  uintptr_t pc;
  uint64_t value;
  uint64_t time;
  uint32_t serial;  // block run (Worker::block_serial), low bits
  uint32_t block_lin;
  uint32_t lin;     // thread within the block
  uint32_t size;
};

// Open addressing keyed by address; an entry older than the current launch counts as free,
// so nothing is cleared between launches.
static Entry* g_tab = nullptr;
static size_t g_cap = 0;
static size_t g_live = 0;
static bool g_full = false;
static const size_t kMaxSlots = size_t(1) << 22;  // 2M tracked locations per launch

static uint64_t g_clock = 1;
static uint64_t g_launch_start = 1;
static uint64_t g_last_atomic = 0;  // time of the latest atomic or fence in this launch
static std::vector<uint64_t> g_round_time;  // cooperative launches: start of each grid.sync phase
static const char* g_kernel = "?";

struct Pending {
  bool active = false;
  size_t slot = 0;
  uintptr_t addr = 0;
  unsigned size = 0;
  bool conflict = false;
  Entry other{};
};
static Pending g_pend;
// The last write recorded (a loop writing one location skips the table; any event moves the
// clock, which ends the shortcut).
struct Last {
  uintptr_t addr = 0;
  size_t slot = SIZE_MAX;
  uint32_t lin = 0, serial = 0;
  uint64_t clock = 0;
};
static Last g_last;

struct SharedVar {
  uintptr_t lo, hi;
  std::string name;
};
static std::vector<SharedVar>& shared_vars() {
  static auto* v = new std::vector<SharedVar>();
  return *v;
}
struct Alloc {
  size_t size;
  std::string desc;
};
static std::map<uintptr_t, Alloc>& allocs() {
  static auto* m = new std::map<uintptr_t, Alloc>();
  return *m;
}
static std::mutex g_alloc_m;

static inline uint64_t load_value(uintptr_t a, unsigned size) {
  uint64_t v[2] = {0, 0};
  memcpy(v, reinterpret_cast<const void*>(a), size > 16 ? 16 : size);
  return v[0] ^ (v[1] * 0x9E3779B97F4A7C15ull);
}

// Neighbouring addresses get neighbouring slots within a 256-byte granule: threads write arrays
// in order, and the table is then walked like the array (a scattering hash made every write a
// cache miss). Granules scatter: an address's own high bits (`a ^ a >> 21`, as before) put the
// writes of a grid-stride loop (i, i + G, i + 2G, ... with G * size a power of two) into one run
// of filled slots that every later write walked, so a race-free fill of 4M floats by 64 blocks
// took 115 s here against 0.6 s in index order.
static inline size_t slot_of(uintptr_t a, size_t cap) {
  const uint64_t granule = (uint64_t)(a >> 8) * 0x9E3779B97F4A7C15ull;
  return (size_t)(((granule >> 32) << 8) | (a & 0xFF)) & (cap - 1);
}

extern "C" void __libc_free(void*);
static void grow() {
  size_t cap = g_cap ? g_cap * 2 : (size_t(1) << 16);
  Entry* t = static_cast<Entry*>(calloc(cap, sizeof(Entry)));
  if (!t) {
    g_full = true;
    return;
  }
  size_t live = 0;
  for (size_t i = 0; i < g_cap; ++i) {
    const Entry& e = g_tab[i];
    if (e.addr == 0 || e.time < g_launch_start) continue;
    size_t s = slot_of(e.addr, cap);
    while (t[s].addr != 0) s = (s + 1) & (cap - 1);
    t[s] = e;
    ++live;
  }
  if (g_pend.active) {  // the pending write's slot moved with it
    size_t s = slot_of(g_pend.addr, cap);
    while (t[s].addr != g_pend.addr) s = (s + 1) & (cap - 1);
    g_pend.slot = s;
  }
  __libc_free(g_tab);  // the detector's own table: nothing to forget
  g_last.slot = SIZE_MAX;
  g_tab = t;
  g_cap = cap;
  g_live = live;
}

// The slot holding `a` in this launch, or a free one for it (nullptr: the table is full).
static inline Entry* find(uintptr_t a, bool* live) {
  if (g_live * 2 >= g_cap) {
    if (g_cap < kMaxSlots) grow();
    else g_full = true;
  }
  if (!g_cap) return nullptr;
  size_t s = slot_of(a, g_cap);
  for (;;) {
    Entry& e = g_tab[s];
    const bool current = e.addr != 0 && e.time >= g_launch_start;
    if (!current) {
      *live = false;
      if (g_full) return nullptr;
      ++g_live;
      return &e;
    }
    if (e.addr == a) {
      *live = true;
      return &e;
    }
    s = (s + 1) & (g_cap - 1);
  }
}

static bool in_kernel(Worker* w) { return w && (w->cur || w->direct); }

// Memory a kernel thread frees (device malloc, new/delete) may come back to another thread:
// the writes recorded there are forgotten, so the next owner's writes are not compared with them.
static inline void resolve(Worker* w);
static void forget(void* p, size_t n) {
  resolve(tw);
  if (!g_cap) return;
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p);
  if (n > 4096) {  // a large block: one pass over the table costs less than a lookup per byte
    for (size_t i = 0; i < g_cap; ++i)
      if (g_tab[i].addr - lo < n) g_tab[i].time = 0;
    g_last.slot = SIZE_MAX;
    return;
  }
  for (uintptr_t a = lo; a < lo + n; ++a) {
    size_t s = slot_of(a, g_cap);
    for (;;) {
      Entry& e = g_tab[s];
      if (e.addr == 0 || e.time < g_launch_start) break;
      if (e.addr == a) {
        e.time = 0;
        break;
      }
      s = (s + 1) & (g_cap - 1);
    }
  }
  g_last.slot = SIZE_MAX;
}

static uint32_t thread_lin(Worker* w) {
  if (w->cur) return (uint32_t)w->cur->lin;
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

static thread_local uintptr_t t_stack_lo = 0, t_stack_hi = 0;
static bool on_own_stack(Worker* w, uintptr_t a) {
  if (w->cur) {
    const uintptr_t lo = reinterpret_cast<uintptr_t>(w->cur->stack.lo);
    return a >= lo && a < lo + w->cur->stack.size;
  }
  if (!t_stack_hi) {
    pthread_attr_t at;
    void* lo = nullptr;
    size_t n = 0;
    if (pthread_getattr_np(pthread_self(), &at) == 0) {
      pthread_attr_getstack(&at, &lo, &n);
      pthread_attr_destroy(&at);
    }
    t_stack_lo = reinterpret_cast<uintptr_t>(lo);
    t_stack_hi = t_stack_lo + n;
  }
  return a >= t_stack_lo && a < t_stack_hi;
}

// threadIdx and friends: per host thread, and set by the launch's own thread loop (compiled,
// and so instrumented, in the program) for each CUDA thread.
static inline bool is_thread_state(uintptr_t a) {
  const uintptr_t t = reinterpret_cast<uintptr_t>(&threadIdx), b = reinterpret_cast<uintptr_t>(&blockIdx);
  const uintptr_t d = reinterpret_cast<uintptr_t>(&blockDim), g = reinterpret_cast<uintptr_t>(&gridDim);
  return (a - t < sizeof(uint3)) | (a - b < sizeof(uint3)) | (a - d < sizeof(dim3)) | (a - g < sizeof(dim3));
}

// Whether `a` is in the calling thread's instance of a module's thread-local storage. The shim
// makes `__shared__` `static thread_local`, and a race build runs a launch's blocks on one
// worker thread, so such an address written by two blocks is one block's shared memory after
// another's: a `__shared__` variable declared at file scope (cuda-samples' dct8x8 declares its
// blocks' buffers in a header), which the rewrite cannot name to `shared_decl` as it does a
// kernel's own. Device code has no thread-local memory of its own. Asked only when a write
// would be reported, so the module list is read then (a dlopen'ed module's block may be new).
static bool in_thread_local_storage(uintptr_t a) {
  // The ranges are read once per thread and launch: a benign write of one flag by every block
  // passes here each time.
  static thread_local std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  static thread_local uint64_t read_at = ~0ull;
  if (read_at != g_launch_start) {
    read_at = g_launch_start;
    ranges.clear();
    dl_iterate_phdr([](struct dl_phdr_info* info, size_t, void*) -> int {
      if (!info->dlpi_tls_data) return 0;
      for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_TLS) {
          const uintptr_t lo = reinterpret_cast<uintptr_t>(info->dlpi_tls_data);
          ranges.emplace_back(lo, lo + info->dlpi_phdr[i].p_memsz);
        }
      return 0;
    }, nullptr);
  }
  for (const auto& r : ranges)
    if (a >= r.first && a < r.second) return true;
  return false;
}

static bool is_shared(Worker* w, uintptr_t a) {
  const uintptr_t s = w ? reinterpret_cast<uintptr_t>(w->smem) : 0;
  if (w && w->spec && w->spec->shmem && a >= s && a < s + w->spec->shmem) return true;
  for (const SharedVar& v : shared_vars())
    if (a >= v.lo && a < v.hi) return true;
  return false;
}

static std::string describe_address(Worker* w, uintptr_t a) {
  char b[200];
  const uintptr_t s = w ? reinterpret_cast<uintptr_t>(w->smem) : 0;
  if (w && w->spec && w->spec->shmem && a >= s && a < s + w->spec->shmem) {
    snprintf(b, sizeof b, "shared memory: dynamic shared memory (extern __shared__), byte %zu", (size_t)(a - s));
    return b;
  }
  for (const SharedVar& v : shared_vars())
    if (a >= v.lo && a < v.hi) {
      snprintf(b, sizeof b, "shared memory: %s, byte %zu", v.name.c_str(), (size_t)(a - v.lo));
      return b;
    }
  std::lock_guard<std::mutex> lk(g_alloc_m);
  auto& m = allocs();
  auto it = m.upper_bound(a);
  if (it != m.begin()) {
    --it;
    if (a < it->first + it->second.size) {
      snprintf(b, sizeof b, "global memory: %s, byte %zu", it->second.desc.c_str(), (size_t)(a - it->first));
      return b;
    }
  }
  if (in_thread_local_storage(a)) return "shared memory (a __shared__ variable declared at file scope)";
  return "global memory (a __device__ variable or host memory)";
}

// The inlined frames at a return address in the program, innermost first (file:line, function),
// from addr2line on our own binary; empty when it cannot tell.
static std::vector<std::pair<std::string, std::string>> frames_at(uintptr_t pc) {
  std::vector<std::pair<std::string, std::string>> frames;
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(pc), &info) || !info.dli_fname) return frames;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return frames;
  exe[n] = 0;
  const uintptr_t off = pc - 1 - reinterpret_cast<uintptr_t>(info.dli_fbase);
  char cmd[4300];
  snprintf(cmd, sizeof cmd, "addr2line -f -C -i -e '%s' 0x%zx 2>/dev/null", exe, (size_t)off);
  FILE* p = popen(cmd, "r");
  if (!p) return frames;
  char func[2048], loc[2048];
  while (fgets(func, sizeof func, p) && fgets(loc, sizeof loc, p)) {
    func[strcspn(func, "\n")] = 0;
    loc[strcspn(loc, "\n")] = 0;
    frames.emplace_back(loc, func);
  }
  pclose(p);
  return frames;
}

static bool shim_file(const std::string& loc) { return loc.find("/cpu/include/") != std::string::npos; }

// A write whose innermost source line is the program's own (not a shim header, not a system
// or C++ library header), cached per return address.
static bool program_write(uintptr_t pc) {
  static auto* seen = new std::unordered_map<uintptr_t, bool>();
  auto it = seen->find(pc);
  if (it != seen->end()) return it->second;
  const auto frames = frames_at(pc);
  const bool own = frames.empty() || (!shim_file(frames[0].first) && frames[0].first.rfind("/usr/", 0) != 0);
  (*seen)[pc] = own;
  return own;
}

// Device allocations and shared memory are the program's. Other memory a kernel thread writes
// is a __device__ variable (written by the program's own lines) or the emulator's state: the
// shim's per-thread caches and the bookkeeping of the collective operations it emulates, kept
// in thread-local, static and heap memory and written by shim or library code. A conflict
// there counts only when both writes are the program's own lines.
static bool counts(Worker* w, uintptr_t a, uintptr_t pc1, uintptr_t pc2) {
  if (is_shared(w, a)) return true;
  {
    std::lock_guard<std::mutex> lk(g_alloc_m);
    auto& m = allocs();
    auto it = m.upper_bound(a);
    if (it != m.begin() && a < std::prev(it)->first + std::prev(it)->second.size) return true;
  }
  return program_write(pc1) && program_write(pc2);
}

// "main.cu:12 (in hist)": the innermost frame in the program's own source.
static std::string source_line(uintptr_t pc) {
  const auto frames = frames_at(pc);
  if (frames.empty()) return "?";
  const std::pair<std::string, std::string>* pick = &frames[0];
  for (const auto& fr : frames)
    if (!shim_file(fr.first) && fr.first.rfind("/usr/", 0) != 0 && fr.first.find("??") == std::string::npos) {
      pick = &fr;
      break;
    }
  std::string file = pick->first;
  const size_t disc = file.find(" (discriminator");
  if (disc != std::string::npos) file.resize(disc);
  const size_t slash = file.rfind('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  std::string fn = pick->second;
  const size_t paren = fn.find('(');
  if (paren != std::string::npos) fn.resize(paren);
  return file + (fn.empty() || fn == "??" ? "" : " (in " + fn + ")");
}

static std::string thread_name(uint32_t lin, uint32_t block_lin) {
  const unsigned bx = blockDim.x, by = blockDim.y, gx = gridDim.x, gy = gridDim.y;
  char b[120];
  snprintf(b, sizeof b, "thread (%u,%u,%u) of block (%u,%u,%u)", lin % bx, (lin / bx) % by, lin / (bx * by),
           block_lin % gx, (block_lin / gx) % gy, block_lin / (gx * gy));
  return b;
}

[[noreturn]] static void report(Worker* w, const Entry& first, const Entry& second) {
  fflush(stdout);
  const std::string where = describe_address(w, second.addr);
  const std::string a = source_line(first.pc), b = source_line(second.pc);
  fprintf(stderr,
          "cudashim: race in kernel '%s': lost update of %s: %s wrote it at %s, then %s wrote a different "
          "value at %s, with no __syncthreads(), warp synchronisation, atomic or fence ordering the two "
          "writes (on a GPU one of the updates is lost; use an atomic or a barrier)\n",
          g_kernel, where.c_str(), thread_name(first.lin, first.block_lin).c_str(), a.c_str(),
          thread_name(second.lin, second.block_lin).c_str(), b.c_str());
  fflush(stderr);
  _exit(87);
}

// The previous write has happened by the time any other hook runs: note the value it stored,
// and judge it if it conflicted.
static inline void resolve(Worker* w) {
  if (!g_pend.active) return;
  g_pend.active = false;
  const uint64_t v = load_value(g_pend.addr, g_pend.size);
  Entry& e = g_tab[g_pend.slot];
  if (e.addr != g_pend.addr) return;
  e.value = v;
  if (!g_pend.conflict) return;
  if (v != g_pend.other.value) {
    if (counts(w, e.addr, g_pend.other.pc, e.pc)) report(w, g_pend.other, e);
    return;
  }
  // A benign write (the value already there) leaves the location the earlier writer's: the
  // writing thread's next store is still unordered with that writer's. Recording it as the
  // owner let a read-modify-write loop whose first step adds zero (`x[i] += a[i][0] * y[0]`
  // with a[i][0] == 0, from several threads of one row) update the location unchecked.
  e = g_pend.other;
  e.value = v;
  g_last.slot = SIZE_MAX;
}

static inline void on_write(void* p, unsigned size, uintptr_t pc) {
  Worker* w = tw;
  if (!in_kernel(w)) return;
  resolve(w);
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (on_own_stack(w, a) || is_thread_state(a)) return;
  const uint32_t lin = thread_lin(w);
  const uint32_t serial = (uint32_t)w->block_serial;
  if (g_last.slot < g_cap && g_last.addr == a && g_last.lin == lin && g_last.serial == serial &&
      g_last.clock == g_clock && g_tab[g_last.slot].addr == a) {
    // A thread updating one location in a loop: its own record, nothing could conflict.
    Entry& e = g_tab[g_last.slot];
    e.pc = pc;
    e.size = size;
    g_pend.active = true;
    g_pend.slot = g_last.slot;
    g_pend.addr = a;
    g_pend.size = size;
    g_pend.conflict = false;
    return;
  }
  bool live = false;
  Entry* e = find(a, &live);
  if (!e) return;
  bool conflict = false;
  if (live && (e->lin != lin || e->serial != serial) && e->size == size) {
    if (e->serial == serial) {
      const uint64_t since = std::max(w->race_block_time, w->race_round_time);
      const bool barrier = e->time < since;
      const bool warp = e->lin / 32 == lin / 32 && w->race_lane_sync[lin] > e->time;
      const bool handed = w->race_lane_atomic[lin] > e->time && w->race_lane_atomic[e->lin] > e->time;
      conflict = !barrier && !warp && !handed;
    } else {
      const bool round = e->time < w->race_round_time;
      const bool fenced = g_last_atomic > e->time;
      conflict = !round && !fenced && !is_shared(w, a) && !in_thread_local_storage(a);
    }
  }
  if (conflict) g_pend.other = *e;
  *e = Entry{a, pc, 0, g_clock, serial, (uint32_t)w->block_lin, lin, size};
  g_pend.active = true;
  g_pend.slot = (size_t)(e - g_tab);
  g_pend.addr = a;
  g_pend.size = size;
  g_pend.conflict = conflict;
  g_last = Last{a, g_pend.slot, lin, serial, g_clock};
}

static inline void on_other() {
  Worker* w = tw;
  if (in_kernel(w)) resolve(w);
}

static inline void on_atomic(const volatile void* a = nullptr) {
  Worker* w = tw;
  // The launch's own thread loop polls the runtime's abort flag: not the program's ordering.
  if (!in_kernel(w) || a == static_cast<const volatile void*>(&g_abort_launch)) return;
  resolve(w);
  g_last_atomic = ++g_clock;
  w->race_lane_atomic[thread_lin(w)] = g_last_atomic;
}

// ---- runtime events
static void launch_begins(const LaunchSpec& s) {
  g_launch_start = ++g_clock;
  g_live = 0;  // every entry is now stale, hence free
  g_full = false;
  g_last_atomic = 0;
  g_round_time.assign(1, g_launch_start);
  g_kernel = s.name;
  g_pend.active = false;
}
static void launch_ends() {
  resolve(tw);  // the launch's last write
  g_pend.active = false;
}
static void block_begins(Worker* w, int nthreads) {
  if (g_pend.active) resolve(w);
  w->race_block_time = ++g_clock;
  w->race_round = 0;
  w->race_round_time = g_round_time.empty() ? 0 : g_round_time[0];
  w->race_lane_sync.assign(nthreads, 0);
  w->race_lane_atomic.assign(nthreads, 0);
}
static void barrier_completes(Worker* w) {
  if (g_pend.active) resolve(w);
  w->race_block_time = ++g_clock;
}
static void warp_op_completes(Worker* w, int warp, unsigned group) {
  if (g_pend.active) resolve(w);
  const uint64_t t = ++g_clock;
  for (unsigned g = group; g; g &= g - 1) {
    const size_t lin = (size_t)warp * 32 + __builtin_ctz(g);
    if (lin < w->race_lane_sync.size()) w->race_lane_sync[lin] = t;
  }
}
// A block hands the turn to another block of its launch (blocks that wait for each other run by
// turns): its last write is judged before the next block writes.
static void turn_ends(Worker* w) {
  if (g_pend.active) resolve(w);
}
// A block of a cooperative grid resumes after grid.sync(): the first block of each new phase
// opens it; writes of earlier phases are ordered before every later one.
static void grid_sync_released(Worker* w) {
  if (g_pend.active) resolve(w);
  w->race_round++;
  if (g_round_time.size() <= w->race_round) g_round_time.resize(w->race_round + 1, 0);
  if (!g_round_time[w->race_round]) g_round_time[w->race_round] = ++g_clock;
  w->race_round_time = g_round_time[w->race_round];
}
static void note_shared(void* p, size_t n, const char* name, unsigned line) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p);
  for (const SharedVar& v : shared_vars())
    if (v.lo == lo) return;
  shared_vars().push_back(SharedVar{lo, lo + n, std::string("__shared__ ") + name + " (line " + std::to_string(line) + ")"});
}
static void note_alloc(void* p, size_t n, const std::string& desc) {
  std::lock_guard<std::mutex> lk(g_alloc_m);
  allocs()[reinterpret_cast<uintptr_t>(p)] = Alloc{n, desc};
}
static void note_free(void* p) {
  std::lock_guard<std::mutex> lk(g_alloc_m);
  allocs().erase(reinterpret_cast<uintptr_t>(p));
}

}  // namespace race

// Frees by kernel threads reach forget() (glibc's own free does the freeing).
extern "C" void __libc_free(void*);
extern "C" void free(void* p) {
  if (p && cudashim::race::in_kernel(cudashim::tw)) cudashim::race::forget(p, malloc_usable_size(p));
  __libc_free(p);
}

// ---- the instrumentation's entry points (GCC -fsanitize=thread), without ThreadSanitizer
#define CUDASHIM_PC reinterpret_cast<uintptr_t>(__builtin_return_address(0))
extern "C" {
void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}
void __tsan_read_range(void*, unsigned long) { cudashim::race::on_other(); }
void __tsan_write_range(void*, unsigned long) { cudashim::race::on_other(); }
#define CUDASHIM_RW(N)                                                                           \
  void __tsan_read##N(void*) { cudashim::race::on_other(); }                                     \
  void __tsan_unaligned_read##N(void*) { cudashim::race::on_other(); }                           \
  void __tsan_volatile_read##N(void*) { cudashim::race::on_other(); }                            \
  void __tsan_write##N(void* p) { cudashim::race::on_write(p, N, CUDASHIM_PC); }                 \
  void __tsan_unaligned_write##N(void* p) { cudashim::race::on_write(p, N, CUDASHIM_PC); }       \
  void __tsan_volatile_write##N(void* p) { cudashim::race::on_atomic(p); }
CUDASHIM_RW(1)
CUDASHIM_RW(2)
CUDASHIM_RW(4)
CUDASHIM_RW(8)
CUDASHIM_RW(16)
#undef CUDASHIM_RW

void __tsan_atomic_thread_fence(int) {
  cudashim::race::on_atomic();
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
void __tsan_atomic_signal_fence(int) { cudashim::race::on_atomic(); }

#define CUDASHIM_SEQ __ATOMIC_SEQ_CST
#define CUDASHIM_ATOMICS(N, T)                                                                         \
  T __tsan_atomic##N##_load(const volatile T* a, int) {                                                \
    cudashim::race::on_atomic(a);                                                                       \
    return __atomic_load_n(a, CUDASHIM_SEQ);                                                           \
  }                                                                                                    \
  void __tsan_atomic##N##_store(volatile T* a, T v, int) {                                             \
    cudashim::race::on_atomic(a);                                                                       \
    __atomic_store_n(a, v, CUDASHIM_SEQ);                                                              \
  }                                                                                                    \
  T __tsan_atomic##N##_exchange(volatile T* a, T v, int) {                                             \
    cudashim::race::on_atomic(a);                                                                       \
    return __atomic_exchange_n(a, v, CUDASHIM_SEQ);                                                    \
  }                                                                                                    \
  T __tsan_atomic##N##_fetch_add(volatile T* a, T v, int) {                                            \
    cudashim::race::on_atomic(a);                                                                       \
    return __atomic_fetch_add(a, v, CUDASHIM_SEQ);                                                     \
  }                                                                                                    \
  T __tsan_atomic##N##_fetch_sub(volatile T* a, T v, int) {                                            \
    cudashim::race::on_atomic(a);                                                                       \
    return __atomic_fetch_sub(a, v, CUDASHIM_SEQ);                                                     \
  }                                                                                                    \
  T __tsan_atomic##N##_fetch_and(volatile T* a, T v, int) {                                            \
    cudashim::race::on_atomic(a);                                                                       \
    return __atomic_fetch_and(a, v, CUDASHIM_SEQ);                                                     \
  }                                                                                                    \
  T __tsan_atomic##N##_fetch_or(volatile T* a, T v, int) {                                             \
    cudashim::race::on_atomic(a);                                                                       \
    return __atomic_fetch_or(a, v, CUDASHIM_SEQ);                                                      \
  }                                                                                                    \
  T __tsan_atomic##N##_fetch_xor(volatile T* a, T v, int) {                                            \
    cudashim::race::on_atomic(a);                                                                       \
    return __atomic_fetch_xor(a, v, CUDASHIM_SEQ);                                                     \
  }                                                                                                    \
  T __tsan_atomic##N##_fetch_nand(volatile T* a, T v, int) {                                           \
    cudashim::race::on_atomic(a);                                                                       \
    return __atomic_fetch_nand(a, v, CUDASHIM_SEQ);                                                    \
  }                                                                                                    \
  int __tsan_atomic##N##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) {                 \
    cudashim::race::on_atomic(a);                                                                       \
    return __atomic_compare_exchange_n(a, c, v, false, CUDASHIM_SEQ, CUDASHIM_SEQ);                    \
  }                                                                                                    \
  int __tsan_atomic##N##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) {                   \
    cudashim::race::on_atomic(a);                                                                       \
    return __atomic_compare_exchange_n(a, c, v, true, CUDASHIM_SEQ, CUDASHIM_SEQ);                     \
  }                                                                                                    \
  T __tsan_atomic##N##_compare_exchange_val(volatile T* a, T c, T v, int, int) {                       \
    cudashim::race::on_atomic(a);                                                                       \
    __atomic_compare_exchange_n(a, &c, v, false, CUDASHIM_SEQ, CUDASHIM_SEQ);                          \
    return c;                                                                                          \
  }
CUDASHIM_ATOMICS(8, unsigned char)
CUDASHIM_ATOMICS(16, unsigned short)
CUDASHIM_ATOMICS(32, unsigned int)
CUDASHIM_ATOMICS(64, unsigned long long)
#undef CUDASHIM_ATOMICS

// 16-byte atomics would need libatomic: the emulator serialises them under a lock instead.
static std::mutex g_atomic128;
typedef unsigned __int128 cudashim_u128;
#define CUDASHIM_LOCKED(body)                                                                          \
  cudashim::race::on_atomic();                                                                         \
  std::lock_guard<std::mutex> lk(g_atomic128);                                                         \
  body
cudashim_u128 __tsan_atomic128_load(const volatile cudashim_u128* a, int) { CUDASHIM_LOCKED(return *a;) }
void __tsan_atomic128_store(volatile cudashim_u128* a, cudashim_u128 v, int) { CUDASHIM_LOCKED(*a = v;) }
cudashim_u128 __tsan_atomic128_exchange(volatile cudashim_u128* a, cudashim_u128 v, int) {
  CUDASHIM_LOCKED(cudashim_u128 o = *a; *a = v; return o;)
}
cudashim_u128 __tsan_atomic128_fetch_add(volatile cudashim_u128* a, cudashim_u128 v, int) {
  CUDASHIM_LOCKED(cudashim_u128 o = *a; *a = o + v; return o;)
}
cudashim_u128 __tsan_atomic128_fetch_sub(volatile cudashim_u128* a, cudashim_u128 v, int) {
  CUDASHIM_LOCKED(cudashim_u128 o = *a; *a = o - v; return o;)
}
cudashim_u128 __tsan_atomic128_fetch_and(volatile cudashim_u128* a, cudashim_u128 v, int) {
  CUDASHIM_LOCKED(cudashim_u128 o = *a; *a = o & v; return o;)
}
cudashim_u128 __tsan_atomic128_fetch_or(volatile cudashim_u128* a, cudashim_u128 v, int) {
  CUDASHIM_LOCKED(cudashim_u128 o = *a; *a = o | v; return o;)
}
cudashim_u128 __tsan_atomic128_fetch_xor(volatile cudashim_u128* a, cudashim_u128 v, int) {
  CUDASHIM_LOCKED(cudashim_u128 o = *a; *a = o ^ v; return o;)
}
cudashim_u128 __tsan_atomic128_fetch_nand(volatile cudashim_u128* a, cudashim_u128 v, int) {
  CUDASHIM_LOCKED(cudashim_u128 o = *a; *a = ~(o & v); return o;)
}
int __tsan_atomic128_compare_exchange_strong(volatile cudashim_u128* a, cudashim_u128* c, cudashim_u128 v, int,
                                             int) {
  CUDASHIM_LOCKED(if (*a == *c) { *a = v; return 1; } *c = *a; return 0;)
}
int __tsan_atomic128_compare_exchange_weak(volatile cudashim_u128* a, cudashim_u128* c, cudashim_u128 v, int,
                                           int) {
  CUDASHIM_LOCKED(if (*a == *c) { *a = v; return 1; } *c = *a; return 0;)
}
cudashim_u128 __tsan_atomic128_compare_exchange_val(volatile cudashim_u128* a, cudashim_u128 c, cudashim_u128 v,
                                                    int, int) {
  CUDASHIM_LOCKED(cudashim_u128 o = *a; if (o == c) *a = v; return o;)
}
#undef CUDASHIM_LOCKED
}  // extern "C"
#endif  // CUDASHIM_RACE
