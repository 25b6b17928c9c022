// The cuda backend's kernel-work and no-launch runs (validators/kernel_work.py): an LD_PRELOAD
// library in front of the program's (dynamically linked) CUDA runtime. It runs the same
// substitution as the cpu runtime (validators/cpu/runtime/kernel_inputs.h), with one difference a
// GPU forces: device memory cannot be patched with memcpy, so an upload is substituted on its
// SOURCE side (the host's bytes are copied to a staging buffer, runs of an input replaced there,
// then the real copy is made from the staging buffer), and a read-back is patched in the host's
// buffer after the copy completed. Memory a kernel reads in place (managed, pinned, registered)
// holds the second draw for the duration of each launch, which is therefore made synchronous in
// that run only (the host must not see the swap, and must not touch managed memory while a kernel
// runs). Copies that take other routes are followed too: 3D and CUDA-array copies, copies captured
// into a graph (staged into kept buffers, patched after each launch of the graph), and cuBLAS's
// own Set/Get copies, which libcublas makes past the runtime's entry points. What a program
// imports beyond these is read from its executable (validators/backends/cuda.py `unfollowed`).
//
// Settings (read, then removed from the environment and wiped from the initial environment
// block, in this library's constructor; same names as the cpu runtime):
//   CUDASHIM_KERNEL_INPUTS=<file>      the validator's inputs file (unlinked once read)
//   CUDASHIM_KERNEL_INPUTS_LOG=<file>  "up <input> <begin> <end>" / "down <input> <n>" lines
//   CUDASHIM_LOG_UPLOADS=1             note every upload, mapped memory and the kernel's by-value
//                                      arguments at each launch, as
//   CUDASHIM_UPLOAD_LOG=<file>         "<n> <hash>" lines (validators/engine.py `upload_hash`)
//   CUDASHIM_NO_LAUNCH=1               every kernel launch is a no-op (and uploads are noted)
//   CUDASHIM_KERNEL_TIMING=<file>      each launch timed alone (streams synchronised, L2 flushed):
//                                      "<seconds> <launches>" (the speed term)
//   CUDASHIM_RUN_TIMING=<file>         the run's split at exit, as the cpu runtime writes it
//                                      (validators/run_timing.py): launches and copies timed
//                                      with the device synchronised around each, no L2 flush
//   CUDASHIM_LOG_NONCE=<hex>           the run's nonce: the logs above (not RUN_TIMING) are created
//                                      here, before any code of the program runs (O_EXCL), held
//                                      open, and written at exit as "ckd-runtime-log <nonce>" and
//                                      their lines; the validator believes no log without it
//   CUDASHIM_FATAL_TAG=<hex>           tags `fatal`'s line; forgotten once the constructor is done
// Values may be padded with trailing spaces (the validator pads them to one width).
//
// Built with g++ alone (no CUDA headers): the few types the wrapped functions take are declared
// here with the runtime's ABI (enums are ints, dim3 three unsigned ints, handles pointers).
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "kernel_inputs.h"

extern "C" {
typedef int cudaError_t;
typedef void* cudaStream_t;
typedef void* cudaKernel_t;
struct dim3 {
  unsigned x, y, z;
};
struct cudaLaunchConfig_t;
typedef void* cudaGraph_t;
typedef void* cudaGraphExec_t;
typedef void* cudaArray_t;
struct cudaPos {
  size_t x, y, z;
};
struct cudaPitchedPtr {
  void* ptr;
  size_t pitch, xsize, ysize;
};
struct cudaExtent {
  size_t width, height, depth;
};
struct cudaMemcpy3DParms {
  cudaArray_t srcArray;
  cudaPos srcPos;
  cudaPitchedPtr srcPtr;
  cudaArray_t dstArray;
  cudaPos dstPos;
  cudaPitchedPtr dstPtr;
  cudaExtent extent;
  int kind;
};
struct cudaChannelFormatDesc {
  int x, y, z, w, f;
};
typedef int cublasStatus_t;
enum { kCublasSuccess = 0, kCublasNotInitialized = 1 };
enum { kH2H = 0, kH2D = 1, kD2H = 2, kD2D = 3, kDefault = 4 };
enum { kTypeDevice = 2, kTypeManaged = 3 };
constexpr cudaError_t kUnknown = 999;  // cudaErrorUnknown: the real runtime is missing
// Read by the per-program library stubs (validators/backends/cuda.py `library_stubs`): in the
// no-launch run, a library's compute calls return success without computing, as launches do.
__attribute__((visibility("default"))) volatile int ckd_no_launch_flag;
}

namespace {

// ---------------------------------------------------------------- settings

char g_env[16][2][256];
int g_nenv;

const char* setting(const char* name) {
  for (int i = 0; i < g_nenv; i++)
    if (!strcmp(g_env[i][0], name)) return g_env[i][1];
  return nullptr;
}

bool flag(const char* name) {
  const char* v = setting(name);
  return v && v[0] == '1';
}

// Made on first use: the constructor below fills it before the library's dynamic initialisers
// would run (a global object would be constructed again, empty, after it).
ckd_subst::Substitution& subst() {
  static auto* s = new ckd_subst::Substitution();
  return *s;
}
std::mutex g_mutex;  // the substitution's state, the logs and the mapped ranges
bool g_no_launch, g_log_uploads;
void* g_map;  // the inputs file: PROT_NONE outside the substitution, so a read finds nothing
size_t g_map_len;

// Opens the inputs file's pages for the lifetime of one substitution (caller holds g_mutex).
struct Readable {
  Readable() { if (g_map) mprotect(g_map, g_map_len, PROT_READ); }
  ~Readable() { if (g_map) mprotect(g_map, g_map_len, PROT_NONE); }
};

// Raw system calls: the access-log shim (preloaded beside this library) would otherwise record
// the validator's own files as the program's.
int raw_open(const char* path, int flags, int mode = 0) {
  return (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode);
}

// With CUDASHIM_LOG_NONCE, each log is created before any code of the program runs (O_EXCL: a
// fresh file of ours, never one the program made), held open, kept in memory and written at exit
// (ftruncate, then the nonce line and the text) through the held descriptor, if it still names
// the file created here. A program that pre-creates a log, makes it unwritable, plants lines in
// it, or replaces it therefore leaves a log without this run's nonce, which the validator holds
// against it. This raises the bar, no more: the program shares this process, so it can read the
// nonce from our memory and forge a whole log.
struct HeldLog {
  const char* path;  // the setting's value (g_env)
  int fd;
  dev_t dev;
  ino_t ino;
  std::string* text;  // allocated: a global std::string would be constructed after us, empty
};
HeldLog g_held[4];
int g_nheld;
const size_t kMaxLog = size_t(1) << 24;  // the validator reads no more

HeldLog* held(const char* path) {
  for (int i = 0; path && i < g_nheld; i++)
    if (!strcmp(g_held[i].path, path)) return &g_held[i];
  return nullptr;
}

void write_held_logs() {
  std::lock_guard<std::mutex> lk(g_mutex);
  const char* nonce = setting("CUDASHIM_LOG_NONCE");
  for (int i = 0; i < g_nheld; i++) {
    HeldLog& h = g_held[i];
    struct stat st;
    // The program may have closed our descriptor and opened another file under its number.
    if (fstat(h.fd, &st) != 0 || st.st_dev != h.dev || st.st_ino != h.ino) continue;
    std::string text = std::string("ckd-runtime-log ") + nonce + "\n" + *h.text;
    if (ftruncate(h.fd, 0) != 0) continue;
    for (size_t off = 0; off < text.size();) {
      ssize_t w = pwrite(h.fd, text.data() + off, text.size() - off, (off_t)off);
      if (w <= 0) break;
      off += (size_t)w;
    }
  }
}

[[noreturn]] void fatal(const char* what, const char* path);

void open_held_logs() {
  const char* nonce = setting("CUDASHIM_LOG_NONCE");
  if (!nonce || !*nonce) return;
  for (const char* name : {"CUDASHIM_KERNEL_INPUTS_LOG", "CUDASHIM_UPLOAD_LOG", "CUDASHIM_KERNEL_TIMING"}) {
    const char* path = setting(name);
    if (!path || !*path || held(path) || g_nheld >= 4) continue;
    int fd = raw_open(path, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC, 0600);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) fatal("cannot create the log", path);
    g_held[g_nheld++] = HeldLog{path, fd, st.st_dev, st.st_ino, new std::string()};
  }
  atexit(write_held_logs);  // registered before main: runs after the program's own handlers
}

// Replace (timing) or extend a held log's text; false when `path` is not held.
bool held_write(const char* path, const char* line, size_t n, bool replace) {
  HeldLog* h = held(path);
  if (!h) return false;
  if (replace) h->text->clear();
  if (h->text->size() + n <= kMaxLog) h->text->append(line, n);
  return true;
}

void append(const char* path, const char* line, size_t n) {
  if (!path || !*path || held_write(path, line, n, false)) return;
  int fd = raw_open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);
  if (fd < 0) return;
  if (write(fd, line, n) < 0) {
  }
  close(fd);
}

// Only the constructor calls this, before any code of the program ran; its line carries the tag
// (CUDASHIM_FATAL_TAG), which the constructor forgets when it is done, so a program that prints
// the same words and exits 97 cannot pass for our failure (validators/backends/cuda.py).
[[noreturn]] void fatal(const char* what, const char* path) {
  char msg[512];
  const char* tag = setting("CUDASHIM_FATAL_TAG");
  bool tagged = tag && *tag;
  int n = snprintf(msg, sizeof msg, "cuda_interposer%s%s%s: %s %s\n", tagged ? "[" : "", tagged ? tag : "",
                   tagged ? "]" : "", what, path);
  if (write(2, msg, (size_t)n) < 0) {
  }
  _exit(97);
}

void load_inputs() {
  const char* path = setting("CUDASHIM_KERNEL_INPUTS");
  if (!path || !*path) return;
  int fd = raw_open(path, O_RDONLY);
  if (fd < 0) fatal("cannot open the kernel-input file", path);
  struct stat st;
  if (fstat(fd, &st) != 0) fatal("cannot read the kernel-input file", path);
  if (st.st_size == 0) {  // every other run's (the engine writes it alike): nothing replaced
    close(fd);
    syscall(SYS_unlinkat, AT_FDCWD, path, 0);
    return;
  }
  void* m = mmap(nullptr, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  syscall(SYS_unlinkat, AT_FDCWD, path, 0);  // the program never finds it on disk
  if (m == MAP_FAILED || !ckd_subst::parse(static_cast<const unsigned char*>(m), (size_t)st.st_size, subst()))
    fatal("malformed kernel-input file", path);
  g_map = m;
  g_map_len = (size_t)st.st_size;
  mprotect(g_map, g_map_len, PROT_NONE);
}

void run_timing_start();
__attribute__((constructor(101))) void capture_settings() {

  if (!environ) return;
  char** out = environ;
  for (char** e = environ; *e; e++) {
    if (strncmp(*e, "CUDASHIM_", 9) != 0) {
      *out++ = *e;
      continue;
    }
    const char* eq = strchr(*e, '=');
    if (eq && g_nenv < 16) {
      size_t kn = std::min<size_t>(eq - *e, 255);
      memcpy(g_env[g_nenv][0], *e, kn);
      g_env[g_nenv][0][kn] = 0;
      size_t vn = std::min<size_t>(strlen(eq + 1), 255);
      memcpy(g_env[g_nenv][1], eq + 1, vn);
      while (vn && g_env[g_nenv][1][vn - 1] == ' ') vn--;  // the padding
      g_env[g_nenv][1][vn] = 0;
      g_nenv++;
    }
    memset(*e, 0, strlen(*e));  // /proc/self/environ shows the initial block
  }
  *out = nullptr;
  run_timing_start();
  g_no_launch = flag("CUDASHIM_NO_LAUNCH");
  ckd_no_launch_flag = g_no_launch ? 1 : 0;
  g_log_uploads = flag("CUDASHIM_LOG_UPLOADS");
  load_inputs();
  open_held_logs();
  for (int i = 0; i < g_nenv; i++)  // no later `fatal`: the program must never find the tag
    if (!strcmp(g_env[i][0], "CUDASHIM_FATAL_TAG")) memset(g_env[i][1], 0, sizeof g_env[i][1]);
}

// ---------------------------------------------------------------- logs

// Same hash as the cpu runtime's note_upload_impl and validators/engine.py upload_hash.
void note_upload(const void* src, size_t n) {
  if (!(g_no_launch || g_log_uploads) || !src || n == 0) return;
  const unsigned long long C0 = 0x9E3779B97F4A7C15ull, C1 = 0xBF58476D1CE4E5B9ull, C2 = 0x94D049BB133111EBull;
  unsigned long long h = (unsigned long long)n * C0;
  const unsigned char* p = static_cast<const unsigned char*>(src);
  for (size_t i = 0; i < (n + 7) / 8; i++) {
    unsigned long long w = 0;
    memcpy(&w, p + i * 8, std::min<size_t>(8, n - i * 8));
    h += (w ^ ((unsigned long long)i * C1)) * C2;
  }
  char line[64];
  int k = snprintf(line, sizeof line, "%zu %llu\n", n, h);
  std::lock_guard<std::mutex> lk(g_mutex);
  append(setting("CUDASHIM_UPLOAD_LOG"), line, (size_t)k);
}

// Substitute runs of the inputs in `dst` (a copy of `src`'s n bytes); true when any was.
// Caller holds g_mutex.
bool substitute_upload(const void* src, void* dst, size_t n) {
  Readable open;
  std::vector<size_t> before(subst().inputs.size());
  for (size_t i = 0; i < before.size(); i++) before[i] = subst().inputs[i].uploaded.size();
  subst().on_upload(src, dst, n);
  bool any = false;
  const char* log = setting("CUDASHIM_KERNEL_INPUTS_LOG");
  for (size_t i = 0; i < before.size(); i++)
    for (size_t k = before[i]; k < subst().inputs[i].uploaded.size(); k++) {
      char line[96];
      int m = snprintf(line, sizeof line, "up %zu %zu %zu\n", i, subst().inputs[i].uploaded[k].first,
                       subst().inputs[i].uploaded[k].second);
      append(log, line, (size_t)m);
      any = true;
    }
  return any;
}

// Give the host its own bytes back in `dst` (what the device returned). Caller holds g_mutex.
void substitute_download(void* dst, size_t n) {
  Readable open;
  std::vector<size_t> before(subst().inputs.size());
  for (size_t i = 0; i < before.size(); i++) before[i] = subst().inputs[i].returned;
  subst().on_download(dst, n);
  const char* log = setting("CUDASHIM_KERNEL_INPUTS_LOG");
  for (size_t i = 0; i < before.size(); i++)
    if (subst().inputs[i].returned > before[i]) {
      char line[64];
      int m = snprintf(line, sizeof line, "down %zu %zu\n", i, subst().inputs[i].returned - before[i]);
      append(log, line, (size_t)m);
    }
}

// Memory kernels read in place, by start address.
std::map<uintptr_t, size_t>& mapped() {
  static auto* m = new std::map<uintptr_t, size_t>();
  return *m;
}

bool in_mapped(const void* p) {
  auto& m = mapped();
  auto it = m.upper_bound(reinterpret_cast<uintptr_t>(p));
  if (it == m.begin()) return false;
  --it;
  return reinterpret_cast<uintptr_t>(p) < it->first + it->second;
}

template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

// ---------------------------------------------------------------- the wrapped runtime

namespace {

void synchronize(cudaStream_t stream) {
  static auto sync = real<cudaError_t (*)(cudaStream_t)>("cudaStreamSynchronize");
  static auto all = real<cudaError_t (*)()>("cudaDeviceSynchronize");
  if (stream && sync) sync(stream);
  else if (all) all();  // the default stream, legacy or per-thread
}

// Device or managed memory by the runtime's own account (cudaMemcpyDefault's rule).
bool on_device(const void* p) {
  static auto attrs = real<cudaError_t (*)(void*, const void*)>("cudaPointerGetAttributes");
  if (!attrs || !p) return false;
  alignas(16) unsigned char buf[256] = {};  // struct cudaPointerAttributes: type first
  if (attrs(buf, p) != 0) return false;
  int type;
  memcpy(&type, buf, sizeof type);
  return type == kTypeDevice || type == kTypeManaged;
}

int direction(int kind, const void* dst, const void* src) {
  if (kind != kDefault) return kind;
  bool to = on_device(dst), from = on_device(src);
  return to == from ? (to ? kD2D : kH2H) : to ? kH2D : kD2H;
}

// An upload into memory the host reads in place (managed, pinned) is left as it is: the swap at
// each launch gives the device the second draw there, and the host must keep seeing its own.
bool substitutes(int dir, const void* dst) {
  return dir == kH2D && subst().active() && !in_mapped(dst);
}

// While a stream is captured (cudaStreamBeginCapture ... EndCapture), copies and launches are
// recorded into a graph, not made: nothing may be waited for (a synchronisation ends the capture
// with an error), and the graph reads the host's buffers each time it runs. So an upload captured
// in the device-input run is staged into a buffer kept for the process's life, and a captured
// read-back is patched after each launch of a graph made from that capture.
std::atomic<int> g_capturing{0};
bool capturing() { return g_capturing.load() > 0; }

using Span = std::pair<void*, size_t>;
std::vector<Span>& pending_reads() {  // read-backs captured so far, not yet in a graph
  static auto* v = new std::vector<Span>();
  return *v;
}
std::map<void*, std::vector<Span>>& graph_reads() {  // by cudaGraph_t, then by cudaGraphExec_t
  static auto* m = new std::map<void*, std::vector<Span>>();
  return *m;
}
std::map<void*, std::vector<Span>>& exec_reads() {
  static auto* m = new std::map<void*, std::vector<Span>>();
  return *m;
}

// The source an upload is made from: `src`, or a copy of its first n bytes with the second
// draw's runs substituted in [lo, n) (the bytes the copy reads; a pitched copy's gaps included).
const void* stage(const void* src, size_t n, std::vector<unsigned char>& staging, size_t lo = 0) {
  if (n - lo < ckd_subst::MIN_RUN) return src;
  const auto* s = static_cast<const unsigned char*>(src);
  std::lock_guard<std::mutex> lk(g_mutex);
  std::vector<unsigned char>* into = &staging;
  if (capturing()) into = new std::vector<unsigned char>();  // the graph reads it at each launch
  into->assign(s, s + n);
  if (substitute_upload(s + lo, into->data() + lo, n - lo)) return into->data();
  if (into != &staging) delete into;
  return src;
}

// An upload's source, noted in the upload log and staged for the device-input run.
const void* upload_from(int dir, const void* dst, const void* src, size_t n, std::vector<unsigned char>& staging,
                        size_t lo = 0) {
  if (dir != kH2D || !src) return src;
  note_upload(static_cast<const unsigned char*>(src) + lo, n - lo);
  return substitutes(dir, dst) ? stage(src, n, staging, lo) : src;
}

// After an asynchronous copy from staging: the staging buffer is freed on return, so the copy is
// waited for (a captured one reads kept staging when its graph runs).
void upload_done(bool async, cudaError_t e, const void* from, const void* src, cudaStream_t stream) {
  if (async && e == 0 && from != src && !capturing()) synchronize(stream);
}

void returned(void* dst, size_t n) {
  if (!subst().active() || n < ckd_subst::MIN_RUN) return;
  std::lock_guard<std::mutex> lk(g_mutex);
  substitute_download(dst, n);
}

// After a read-back into the host's n bytes at dst: give the host its own bytes back there, once
// the copy is complete (captured: after each launch of the graph).
void download_done(int dir, bool async, cudaError_t e, void* dst, size_t n, cudaStream_t stream) {
  if (e != 0 || dir != kD2H || !subst().active() || !dst || n < ckd_subst::MIN_RUN) return;
  if (capturing()) {
    std::lock_guard<std::mutex> lk(g_mutex);
    pending_reads().push_back({dst, n});
    return;
  }
  if (async) synchronize(stream);
  returned(dst, n);
}

void track(void** p, size_t n, cudaError_t e) {
  if (e != 0 || !p || !*p || n == 0) return;
  std::lock_guard<std::mutex> lk(g_mutex);
  mapped()[reinterpret_cast<uintptr_t>(*p)] = n;
}

void untrack(void* p) {
  std::lock_guard<std::mutex> lk(g_mutex);
  mapped().erase(reinterpret_cast<uintptr_t>(p));
}

// Around every launch: mapped memory noted (upload log) and swapped to the second draw, then
// given back once the kernel finished. Returns whether the launch must be waited for.
bool before_launch() {
  std::vector<std::pair<uintptr_t, size_t>> ranges;
  {
    std::lock_guard<std::mutex> lk(g_mutex);
    ranges.assign(mapped().begin(), mapped().end());
  }
  for (auto& r : ranges) note_upload(reinterpret_cast<void*>(r.first), r.second);
  if (!subst().active() || ranges.empty() || g_no_launch) return false;
  synchronize(nullptr);  // no earlier kernel may be reading them while the host writes
  std::lock_guard<std::mutex> lk(g_mutex);
  for (auto& r : ranges) {
    void* p = reinterpret_cast<void*>(r.first);
    substitute_upload(p, p, r.second);
  }
  return true;
}

void after_launch() {
  synchronize(nullptr);
  std::lock_guard<std::mutex> lk(g_mutex);
  for (auto& r : mapped()) substitute_download(reinterpret_cast<void*>(r.first), r.second);
}

// CUDASHIM_KERNEL_TIMING=<file>: the speed term's measurement. Each launch runs alone: every
// stream is synchronised before it, the L2 cache is flushed (a memset of twice its size), and
// the device is synchronised after it; the time between is the launch's. The file holds
// "<seconds> <launches>" for all launches so far (rewritten after each): timing lives here, in
// the runtime the program calls, not in its code path.
struct Timing {
  double seconds = 0;
  long launches = 0;
  double copy_seconds = 0;  // CUDASHIM_RUN_TIMING only
  long copies = 0;
  double start = 0;
  void* flush = nullptr;
  size_t flush_bytes = 0;
};
Timing& timing() {
  static auto* t = new Timing();
  return *t;
}

void flush_l2() {
  Timing& t = timing();
  if (!t.flush) {
    static auto attr = real<cudaError_t (*)(int*, int, int)>("cudaDeviceGetAttribute");
    static auto alloc = real<cudaError_t (*)(void**, size_t)>("cudaMalloc");
    int l2 = 0;
    const int kL2CacheSize = 89;  // cudaDevAttrL2CacheSize
    if (attr) attr(&l2, kL2CacheSize, 0);
    t.flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20);
    if (!alloc || alloc(&t.flush, t.flush_bytes) != 0) t.flush = nullptr;
  }
  static auto memset_ = real<cudaError_t (*)(void*, int, size_t)>("cudaMemset");
  if (t.flush && memset_) memset_(t.flush, (int)(t.launches & 0xff), t.flush_bytes);
}

// CUDASHIM_RUN_TIMING=<file>: the run's split for `validators run`, on the clock the validator
// reads (CLOCK_MONOTONIC, which steady_clock is on Linux), written once at exit.
bool run_timing() {
  const char* log = setting("CUDASHIM_RUN_TIMING");
  return log && *log;
}
double mono_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
void write_run_timing() {
  std::lock_guard<std::mutex> lk(g_mutex);
  Timing& t = timing();
  char text[256];
  int n = snprintf(text, sizeof text, "start %.9f\nend %.9f\nkernels %.9f %ld\ncopies %.9f %ld\n", t.start,
                   mono_seconds(), t.seconds, t.launches, t.copy_seconds, t.copies);
  int fd = raw_open(setting("CUDASHIM_RUN_TIMING"), O_WRONLY | O_TRUNC | O_CREAT, 0600);
  if (fd >= 0) {
    if (write(fd, text, (size_t)n) < 0) {
    }
    close(fd);
  }
}
void run_timing_start() {
  if (!run_timing()) return;
  timing().start = mono_seconds();
  atexit(write_run_timing);  // registered first: runs after the program's own handlers
}

template <class F, class... A>
cudaError_t timed(F f, A... args) {
  const char* log = setting("CUDASHIM_KERNEL_TIMING");
  bool speed = log && *log;
  if (!speed && !run_timing()) return f(args...);
  synchronize(nullptr);
  if (speed) {  // the speed term: every launch starts from a cold L2
    flush_l2();
    synchronize(nullptr);
  }
  auto t0 = std::chrono::steady_clock::now();
  cudaError_t e = f(args...);
  synchronize(nullptr);
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard<std::mutex> lk(g_mutex);
  Timing& t = timing();
  t.seconds += dt;
  t.launches += 1;
  if (!speed) return e;
  char line[64];
  int n = snprintf(line, sizeof line, "%.9f %ld\n", t.seconds, t.launches);
  if (held_write(log, line, (size_t)n, true)) return e;
  int fd = raw_open(log, O_WRONLY | O_TRUNC | O_CREAT, 0600);
  if (fd >= 0) {
    if (write(fd, line, (size_t)n) < 0) {
    }
    close(fd);
  }
  return e;
}

// A copy's wall time in the run's split; an asynchronous one is waited for, as a launch is.
struct CopyTimer {
  cudaStream_t stream;
  bool async, on = run_timing();
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  ~CopyTimer() {
    if (!on) return;
    if (async) synchronize(stream);
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::lock_guard<std::mutex> lk(g_mutex);
    timing().copy_seconds += dt;
    timing().copies += 1;
  }
};

// Kernel arguments passed by value reach the device too (a struct of coefficients, a scalar read
// from the inputs): in the upload log, each is noted as an upload, as the cpu runtime notes them.
// Their sizes come from the runtime (cudaFuncGetParamInfo, CUDA 12.4 on); pointers to memory the
// runtime knows are left out, since their values change from run to run and carry no input.
void note_args(const void* func, void** args) {
  if (!(g_no_launch || g_log_uploads) || !func || !args) return;
  static auto info = real<cudaError_t (*)(const void*, size_t, size_t*, size_t*)>("cudaFuncGetParamInfo");
  static auto attrs = real<cudaError_t (*)(void*, const void*)>("cudaPointerGetAttributes");
  if (!info) return;
  for (size_t i = 0; i < 4096; i++) {
    size_t offset = 0, size = 0;
    if (info(func, i, &offset, &size) != 0) break;
    if (!args[i] || size == 0) continue;
    if (size == sizeof(void*) && attrs) {
      void* value;
      memcpy(&value, args[i], sizeof value);
      alignas(16) unsigned char buf[256] = {};
      int type = 0;
      if (value && attrs(buf, value) == 0) memcpy(&type, buf, sizeof type);
      if (type != 0) continue;  // cudaMemoryTypeUnregistered is 0: host, device or managed memory
    }
    note_upload(args[i], size);
  }
}

template <class F, class... A>
cudaError_t launch(F f, A... args) {
  if (!f) return kUnknown;
  // Recorded into a graph, not run: nothing to swap or time now (cudaGraphLaunch is a launch);
  // in the no-launch run it is left out of the graph as well.
  if (capturing()) return g_no_launch ? 0 : f(args...);
  bool swapped = before_launch();
  if (g_no_launch) return 0;  // cudaSuccess: the launch is a no-op
  cudaError_t e = timed(f, args...);
  if (swapped) after_launch();
  return e;
}

template <class F>
cudaError_t copy1d(F f, void* dst, const void* src, size_t n, int kind, cudaStream_t stream, bool async) {
  if (!f) return kUnknown;
  CopyTimer timer{stream, async};
  int dir = direction(kind, dst, src);
  std::vector<unsigned char> staging;
  const void* from = upload_from(dir, dst, src, n, staging);
  cudaError_t e = async ? reinterpret_cast<cudaError_t (*)(void*, const void*, size_t, int, cudaStream_t)>(f)(
                              dst, from, n, kind, stream)
                        : reinterpret_cast<cudaError_t (*)(void*, const void*, size_t, int)>(f)(dst, from, n, kind);
  upload_done(async, e, from, src, stream);
  download_done(dir, async, e, dst, n, stream);
  return e;
}

template <class F>
cudaError_t copy2d(F f, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                   int kind, cudaStream_t stream, bool async) {
  if (!f) return kUnknown;
  CopyTimer timer{stream, async};
  int dir = direction(kind, dst, src);
  size_t sspan = height ? spitch * (height - 1) + width : 0, dspan = height ? dpitch * (height - 1) + width : 0;
  std::vector<unsigned char> staging;
  const void* from = upload_from(dir, dst, src, sspan, staging);
  using Sync = cudaError_t (*)(void*, size_t, const void*, size_t, size_t, size_t, int);
  using Async = cudaError_t (*)(void*, size_t, const void*, size_t, size_t, size_t, int, cudaStream_t);
  cudaError_t e = async ? reinterpret_cast<Async>(f)(dst, dpitch, from, spitch, width, height, kind, stream)
                        : reinterpret_cast<Sync>(f)(dst, dpitch, from, spitch, width, height, kind);
  upload_done(async, e, from, src, stream);
  download_done(dir, async, e, dst, dspan, stream);
  return e;
}

template <class F>
cudaError_t to_symbol(F f, const void* symbol, const void* src, size_t n, size_t offset, int kind,
                      cudaStream_t stream, bool async) {
  if (!f) return kUnknown;
  CopyTimer timer{stream, async};
  int dir = kind == kDefault ? (on_device(src) ? kD2D : kH2D) : kind;
  std::vector<unsigned char> staging;
  const void* from = upload_from(dir, nullptr, src, n, staging);
  using Sync = cudaError_t (*)(const void*, const void*, size_t, size_t, int);
  using Async = cudaError_t (*)(const void*, const void*, size_t, size_t, int, cudaStream_t);
  cudaError_t e = async ? reinterpret_cast<Async>(f)(symbol, from, n, offset, kind, stream)
                        : reinterpret_cast<Sync>(f)(symbol, from, n, offset, kind);
  upload_done(async, e, from, src, stream);
  return e;
}

template <class F>
cudaError_t from_symbol(F f, void* dst, const void* symbol, size_t n, size_t offset, int kind,
                        cudaStream_t stream, bool async) {
  if (!f) return kUnknown;
  CopyTimer timer{stream, async};
  int dir = kind == kDefault ? (on_device(dst) ? kD2D : kD2H) : kind;
  using Sync = cudaError_t (*)(void*, const void*, size_t, size_t, int);
  using Async = cudaError_t (*)(void*, const void*, size_t, size_t, int, cudaStream_t);
  cudaError_t e = async ? reinterpret_cast<Async>(f)(dst, symbol, n, offset, kind, stream)
                        : reinterpret_cast<Sync>(f)(dst, symbol, n, offset, kind);
  download_done(dir, async, e, dst, n, stream);
  return e;
}

// CUDA arrays (textures, surfaces) on one side: only the host's side is ours to stage or patch.
// A 3D copy's extent and positions count the array's elements when an array takes part, bytes
// otherwise; a host pointer's position is in bytes.
size_t array_element(cudaArray_t a) {
  static auto info = real<cudaError_t (*)(cudaChannelFormatDesc*, cudaExtent*, unsigned*, cudaArray_t)>(
      "cudaArrayGetInfo");
  cudaChannelFormatDesc d{};
  cudaExtent x{};
  unsigned flags = 0;
  if (!a || !info || info(&d, &x, &flags, a) != 0) return 1;
  int bits = d.x + d.y + d.z + d.w;
  return bits > 0 ? (size_t)bits / 8 : 1;
}

// [lo, hi): the bytes of a pitched host pointer a 3D copy touches, from its base.
void span3d(const cudaPitchedPtr& p, const cudaPos& pos, const cudaExtent& x, size_t elem, size_t& lo, size_t& hi) {
  lo = hi = 0;
  if (!x.width || !x.height || !x.depth) return;
  size_t slice = p.pitch * p.ysize;
  lo = pos.z * slice + pos.y * p.pitch + pos.x;
  hi = lo + (x.depth - 1) * slice + (x.height - 1) * p.pitch + x.width * elem;
}

template <class F>
cudaError_t copy3d(F f, const cudaMemcpy3DParms* p, cudaStream_t stream, bool async) {
  using Sync = cudaError_t (*)(const cudaMemcpy3DParms*);
  using Async = cudaError_t (*)(const cudaMemcpy3DParms*, cudaStream_t);
  if (!f) return kUnknown;
  if (!p) return async ? reinterpret_cast<Async>(f)(p, stream) : reinterpret_cast<Sync>(f)(p);
  CopyTimer timer{stream, async};
  size_t elem = array_element(p->srcArray ? p->srcArray : p->dstArray);
  bool src_dev = p->srcArray || on_device(p->srcPtr.ptr), dst_dev = p->dstArray || on_device(p->dstPtr.ptr);
  int dir = p->kind != kDefault ? p->kind : src_dev == dst_dev ? (src_dev ? kD2D : kH2H) : dst_dev ? kH2D : kD2H;
  cudaMemcpy3DParms q = *p;
  std::vector<unsigned char> staging;
  const void* src = p->srcPtr.ptr;
  const void* from = src;
  if (dir == kH2D && !p->srcArray && src) {
    size_t lo, hi;
    span3d(p->srcPtr, p->srcPos, p->extent, elem, lo, hi);
    if (hi > lo) from = upload_from(dir, p->dstArray ? nullptr : p->dstPtr.ptr, src, hi, staging, lo);
    q.srcPtr.ptr = const_cast<void*>(from);
  }
  cudaError_t e = async ? reinterpret_cast<Async>(f)(&q, stream) : reinterpret_cast<Sync>(f)(&q);
  upload_done(async, e, from, src, stream);
  if (dir == kD2H && !p->dstArray && p->dstPtr.ptr) {
    size_t lo, hi;
    span3d(p->dstPtr, p->dstPos, p->extent, elem, lo, hi);
    if (hi > lo) download_done(dir, async, e, static_cast<unsigned char*>(p->dstPtr.ptr) + lo, hi - lo, stream);
  }
  return e;
}

// cudaMemcpy2DToArray (height rows of width bytes, spitch apart) and cudaMemcpyToArray (one row).
template <class F>
cudaError_t to_array(F f, cudaArray_t a, size_t wo, size_t ho, const void* src, size_t spitch, size_t width,
                     size_t height, int kind, cudaStream_t stream, bool async, bool two_d) {
  if (!f) return kUnknown;
  CopyTimer timer{stream, async};
  int dir = kind == kDefault ? (on_device(src) ? kD2D : kH2D) : kind;
  std::vector<unsigned char> staging;
  const void* from = upload_from(dir, nullptr, src, height ? spitch * (height - 1) + width : 0, staging);
  using Sync2 = cudaError_t (*)(cudaArray_t, size_t, size_t, const void*, size_t, size_t, size_t, int);
  using Async2 = cudaError_t (*)(cudaArray_t, size_t, size_t, const void*, size_t, size_t, size_t, int, cudaStream_t);
  using Sync1 = cudaError_t (*)(cudaArray_t, size_t, size_t, const void*, size_t, int);
  using Async1 = cudaError_t (*)(cudaArray_t, size_t, size_t, const void*, size_t, int, cudaStream_t);
  cudaError_t e = two_d ? (async ? reinterpret_cast<Async2>(f)(a, wo, ho, from, spitch, width, height, kind, stream)
                                 : reinterpret_cast<Sync2>(f)(a, wo, ho, from, spitch, width, height, kind))
                        : (async ? reinterpret_cast<Async1>(f)(a, wo, ho, from, width, kind, stream)
                                 : reinterpret_cast<Sync1>(f)(a, wo, ho, from, width, kind));
  upload_done(async, e, from, src, stream);
  return e;
}

template <class F>
cudaError_t from_array(F f, void* dst, size_t dpitch, cudaArray_t a, size_t wo, size_t ho, size_t width,
                       size_t height, int kind, cudaStream_t stream, bool async, bool two_d) {
  if (!f) return kUnknown;
  CopyTimer timer{stream, async};
  int dir = kind == kDefault ? (on_device(dst) ? kD2D : kD2H) : kind;
  using Sync2 = cudaError_t (*)(void*, size_t, cudaArray_t, size_t, size_t, size_t, size_t, int);
  using Async2 = cudaError_t (*)(void*, size_t, cudaArray_t, size_t, size_t, size_t, size_t, int, cudaStream_t);
  using Sync1 = cudaError_t (*)(void*, cudaArray_t, size_t, size_t, size_t, int);
  using Async1 = cudaError_t (*)(void*, cudaArray_t, size_t, size_t, size_t, int, cudaStream_t);
  cudaError_t e = two_d ? (async ? reinterpret_cast<Async2>(f)(dst, dpitch, a, wo, ho, width, height, kind, stream)
                                 : reinterpret_cast<Sync2>(f)(dst, dpitch, a, wo, ho, width, height, kind))
                        : (async ? reinterpret_cast<Async1>(f)(dst, a, wo, ho, width, kind, stream)
                                 : reinterpret_cast<Sync1>(f)(dst, a, wo, ho, width, kind));
  download_done(dir, async, e, dst, height ? dpitch * (height - 1) + width : 0, stream);
  return e;
}

// cuBLAS's own copies (cublasSetVector/Matrix, their reads back, Async and _64 forms): libcublas
// copies inside itself, past the runtime's entry points, so they are followed here. A strided
// host side is packed first, so the device gets the same elements from contiguous staging.
template <class I>
const void* pack(const void* host, I count, I elem, I stride, I run, std::vector<unsigned char>& packed) {
  // `count` runs of `run` elements, `stride` elements apart -> contiguous.
  const auto* h = static_cast<const unsigned char*>(host);
  size_t r = (size_t)run * (size_t)elem;
  std::vector<unsigned char>* into = &packed;
  if (capturing()) into = new std::vector<unsigned char>();  // an Async copy a graph reads later
  into->resize((size_t)count * r);
  for (I i = 0; i < count; i++) memcpy(into->data() + (size_t)i * r, h + (size_t)i * (size_t)stride * (size_t)elem, r);
  return into->data();
}

// The read-back into `count` runs of `run` elements, `stride` apart, patched as a contiguous copy.
template <class I>
void returned_strided(void* host, I count, I elem, I stride, I run, bool async, cudaStream_t stream) {
  if (!subst().active() || count <= 0 || capturing()) return;
  if (async) synchronize(stream);
  std::vector<unsigned char> packed;
  pack<I>(host, count, elem, stride, run, packed);
  returned(packed.data(), packed.size());
  size_t r = (size_t)run * (size_t)elem;
  auto* h = static_cast<unsigned char*>(host);
  for (I i = 0; i < count; i++) memcpy(h + (size_t)i * (size_t)stride * (size_t)elem, packed.data() + (size_t)i * r, r);
}

// Set: `count` runs of `run` elements of the host, `stride` apart, to the device at `dev`.
template <class I, class Call>
cublasStatus_t cublas_set(const void* host, I count, I elem, I stride, I run, void* dev, cudaStream_t stream,
                          bool async, Call call) {
  if (count <= 0 || run <= 0 || elem <= 0 || stride < run || !host) return call(host, stride);
  std::vector<unsigned char> packed, staging;
  const void* src = stride == run ? host : pack<I>(host, count, elem, stride, run, packed);
  size_t n = (size_t)count * (size_t)run * (size_t)elem;
  const void* from = upload_from(kH2D, dev, src, n, staging);
  cublasStatus_t st = call(from, run);
  if (async && st == kCublasSuccess && (from != host) && !capturing()) synchronize(stream);
  return st;
}

template <class I>
void cublas_got(cublasStatus_t st, void* host, I count, I elem, I stride, I run, cudaStream_t stream, bool async) {
  if (st != kCublasSuccess || count <= 0 || run <= 0 || elem <= 0 || stride < run || !host) return;
  if (stride == run) download_done(kD2H, async, 0, host, (size_t)count * (size_t)run * (size_t)elem, stream);
  else returned_strided<I>(host, count, elem, stride, run, async, stream);
}

void* sym(const char* name) { return dlsym(RTLD_NEXT, name); }

}  // namespace

// Each C entry point in both stream flavours: the legacy default stream and per-thread
// (`--default-stream per-thread` builds call the _ptds/_ptsz forms).
#define CKD_COPIES(SUFFIX_SYNC, SUFFIX_ASYNC)                                                                  \
  cudaError_t cudaMemcpy##SUFFIX_SYNC(void* d, const void* s, size_t n, int k) {                               \
    static void* f = sym("cudaMemcpy" #SUFFIX_SYNC);                                                         \
    return copy1d(f, d, s, n, k, nullptr, false);                                                              \
  }                                                                                                            \
  cudaError_t cudaMemcpyAsync##SUFFIX_ASYNC(void* d, const void* s, size_t n, int k, cudaStream_t st) {        \
    static void* f = sym("cudaMemcpyAsync" #SUFFIX_ASYNC);                                                   \
    return copy1d(f, d, s, n, k, st, true);                                                                    \
  }                                                                                                            \
  cudaError_t cudaMemcpy2D##SUFFIX_SYNC(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h,      \
                                        int k) {                                                               \
    static void* f = sym("cudaMemcpy2D" #SUFFIX_SYNC);                                                       \
    return copy2d(f, d, dp, s, sp, w, h, k, nullptr, false);                                                   \
  }                                                                                                            \
  cudaError_t cudaMemcpy2DAsync##SUFFIX_ASYNC(void* d, size_t dp, const void* s, size_t sp, size_t w,          \
                                              size_t h, int k, cudaStream_t st) {                              \
    static void* f = sym("cudaMemcpy2DAsync" #SUFFIX_ASYNC);                                                 \
    return copy2d(f, d, dp, s, sp, w, h, k, st, true);                                                         \
  }                                                                                                            \
  cudaError_t cudaMemcpyToSymbol##SUFFIX_SYNC(const void* y, const void* s, size_t n, size_t o, int k) {       \
    static void* f = sym("cudaMemcpyToSymbol" #SUFFIX_SYNC);                                                 \
    return to_symbol(f, y, s, n, o, k, nullptr, false);                                                        \
  }                                                                                                            \
  cudaError_t cudaMemcpyToSymbolAsync##SUFFIX_ASYNC(const void* y, const void* s, size_t n, size_t o, int k,   \
                                                    cudaStream_t st) {                                         \
    static void* f = sym("cudaMemcpyToSymbolAsync" #SUFFIX_ASYNC);                                           \
    return to_symbol(f, y, s, n, o, k, st, true);                                                              \
  }                                                                                                            \
  cudaError_t cudaMemcpyFromSymbol##SUFFIX_SYNC(void* d, const void* y, size_t n, size_t o, int k) {           \
    static void* f = sym("cudaMemcpyFromSymbol" #SUFFIX_SYNC);                                               \
    return from_symbol(f, d, y, n, o, k, nullptr, false);                                                      \
  }                                                                                                            \
  cudaError_t cudaMemcpyFromSymbolAsync##SUFFIX_ASYNC(void* d, const void* y, size_t n, size_t o, int k,       \
                                                      cudaStream_t st) {                                       \
    static void* f = sym("cudaMemcpyFromSymbolAsync" #SUFFIX_ASYNC);                                         \
    return from_symbol(f, d, y, n, o, k, st, true);                                                            \
  }                                                                                                            \
  cudaError_t cudaMemcpy3D##SUFFIX_SYNC(const cudaMemcpy3DParms* p) {                                          \
    static void* f = sym("cudaMemcpy3D" #SUFFIX_SYNC);                                                       \
    return copy3d(f, p, nullptr, false);                                                                       \
  }                                                                                                            \
  cudaError_t cudaMemcpy3DAsync##SUFFIX_ASYNC(const cudaMemcpy3DParms* p, cudaStream_t st) {                   \
    static void* f = sym("cudaMemcpy3DAsync" #SUFFIX_ASYNC);                                                 \
    return copy3d(f, p, st, true);                                                                             \
  }                                                                                                            \
  cudaError_t cudaMemcpy2DToArray##SUFFIX_SYNC(cudaArray_t a, size_t wo, size_t ho, const void* s, size_t sp,  \
                                               size_t w, size_t h, int k) {                                    \
    static void* f = sym("cudaMemcpy2DToArray" #SUFFIX_SYNC);                                                \
    return to_array(f, a, wo, ho, s, sp, w, h, k, nullptr, false, true);                                       \
  }                                                                                                            \
  cudaError_t cudaMemcpy2DToArrayAsync##SUFFIX_ASYNC(cudaArray_t a, size_t wo, size_t ho, const void* s,       \
                                                     size_t sp, size_t w, size_t h, int k, cudaStream_t st) {  \
    static void* f = sym("cudaMemcpy2DToArrayAsync" #SUFFIX_ASYNC);                                          \
    return to_array(f, a, wo, ho, s, sp, w, h, k, st, true, true);                                             \
  }                                                                                                            \
  cudaError_t cudaMemcpyToArray##SUFFIX_SYNC(cudaArray_t a, size_t wo, size_t ho, const void* s, size_t n,     \
                                             int k) {                                                          \
    static void* f = sym("cudaMemcpyToArray" #SUFFIX_SYNC);                                                  \
    return to_array(f, a, wo, ho, s, n, n, 1, k, nullptr, false, false);                                       \
  }                                                                                                            \
  cudaError_t cudaMemcpyToArrayAsync##SUFFIX_ASYNC(cudaArray_t a, size_t wo, size_t ho, const void* s,         \
                                                   size_t n, int k, cudaStream_t st) {                         \
    static void* f = sym("cudaMemcpyToArrayAsync" #SUFFIX_ASYNC);                                            \
    return to_array(f, a, wo, ho, s, n, n, 1, k, st, true, false);                                             \
  }                                                                                                            \
  cudaError_t cudaMemcpy2DFromArray##SUFFIX_SYNC(void* d, size_t dp, cudaArray_t a, size_t wo, size_t ho,      \
                                                 size_t w, size_t h, int k) {                                  \
    static void* f = sym("cudaMemcpy2DFromArray" #SUFFIX_SYNC);                                              \
    return from_array(f, d, dp, a, wo, ho, w, h, k, nullptr, false, true);                                     \
  }                                                                                                            \
  cudaError_t cudaMemcpy2DFromArrayAsync##SUFFIX_ASYNC(void* d, size_t dp, cudaArray_t a, size_t wo,           \
                                                       size_t ho, size_t w, size_t h, int k, cudaStream_t st) { \
    static void* f = sym("cudaMemcpy2DFromArrayAsync" #SUFFIX_ASYNC);                                        \
    return from_array(f, d, dp, a, wo, ho, w, h, k, st, true, true);                                           \
  }                                                                                                            \
  cudaError_t cudaMemcpyFromArray##SUFFIX_SYNC(void* d, cudaArray_t a, size_t wo, size_t ho, size_t n, int k) { \
    static void* f = sym("cudaMemcpyFromArray" #SUFFIX_SYNC);                                                \
    return from_array(f, d, n, a, wo, ho, n, 1, k, nullptr, false, false);                                     \
  }                                                                                                            \
  cudaError_t cudaMemcpyFromArrayAsync##SUFFIX_ASYNC(void* d, cudaArray_t a, size_t wo, size_t ho, size_t n,   \
                                                     int k, cudaStream_t st) {                                 \
    static void* f = sym("cudaMemcpyFromArrayAsync" #SUFFIX_ASYNC);                                          \
    return from_array(f, d, n, a, wo, ho, n, 1, k, st, true, false);                                           \
  }

#define CKD_LAUNCHES(SUFFIX)                                                                                   \
  cudaError_t cudaLaunchKernel##SUFFIX(const void* fn, dim3 g, dim3 b, void** a, size_t sm, cudaStream_t st) { \
    using F = cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t);                          \
    static F f = real<F>("cudaLaunchKernel" #SUFFIX);                                                        \
    note_args(fn, a);                                                                                          \
    return launch(f, fn, g, b, a, sm, st);                                                                     \
  }                                                                                                            \
  cudaError_t __cudaLaunchKernel##SUFFIX(cudaKernel_t k, dim3 g, dim3 b, void** a, size_t sm,                  \
                                         cudaStream_t st) {                                                    \
    using F = cudaError_t (*)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);                         \
    static F f = real<F>("__cudaLaunchKernel" #SUFFIX);                                                      \
    note_args(k, a);                                                                                           \
    return launch(f, k, g, b, a, sm, st);                                                                      \
  }                                                                                                            \
  cudaError_t cudaLaunchCooperativeKernel##SUFFIX(const void* fn, dim3 g, dim3 b, void** a, size_t sm,         \
                                                  cudaStream_t st) {                                           \
    using F = cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t);                          \
    static F f = real<F>("cudaLaunchCooperativeKernel" #SUFFIX);                                             \
    note_args(fn, a);                                                                                          \
    return launch(f, fn, g, b, a, sm, st);                                                                     \
  }                                                                                                            \
  cudaError_t cudaLaunchKernelExC##SUFFIX(const cudaLaunchConfig_t* c, const void* fn, void** a) {             \
    using F = cudaError_t (*)(const cudaLaunchConfig_t*, const void*, void**);                                 \
    static F f = real<F>("cudaLaunchKernelExC" #SUFFIX);                                                     \
    note_args(fn, a);                                                                                          \
    return launch(f, c, fn, a);                                                                                \
  }

extern "C" {
CKD_COPIES(, )
CKD_COPIES(_ptds, _ptsz)
CKD_LAUNCHES()
CKD_LAUNCHES(_ptsz)

cudaError_t cudaMallocManaged(void** p, size_t n, unsigned flags) {
  static auto f = real<cudaError_t (*)(void**, size_t, unsigned)>("cudaMallocManaged");
  if (!f) return kUnknown;
  cudaError_t e = f(p, n, flags);
  track(p, n, e);
  return e;
}

cudaError_t cudaMallocHost(void** p, size_t n) {
  static auto f = real<cudaError_t (*)(void**, size_t)>("cudaMallocHost");
  if (!f) return kUnknown;
  cudaError_t e = f(p, n);
  track(p, n, e);
  return e;
}

cudaError_t cudaHostAlloc(void** p, size_t n, unsigned flags) {
  static auto f = real<cudaError_t (*)(void**, size_t, unsigned)>("cudaHostAlloc");
  if (!f) return kUnknown;
  cudaError_t e = f(p, n, flags);
  track(p, n, e);
  return e;
}

cudaError_t cudaHostRegister(void* p, size_t n, unsigned flags) {
  static auto f = real<cudaError_t (*)(void*, size_t, unsigned)>("cudaHostRegister");
  if (!f) return kUnknown;
  cudaError_t e = f(p, n, flags);
  track(&p, n, e);
  return e;
}

cudaError_t cudaHostUnregister(void* p) {
  static auto f = real<cudaError_t (*)(void*)>("cudaHostUnregister");
  if (!f) return kUnknown;
  untrack(p);
  return f(p);
}

cudaError_t cudaFree(void* p) {
  static auto f = real<cudaError_t (*)(void*)>("cudaFree");
  if (!f) return kUnknown;
  untrack(p);  // managed memory is freed here
  return f(p);
}

cudaError_t cudaFreeHost(void* p) {
  static auto f = real<cudaError_t (*)(void*)>("cudaFreeHost");
  if (!f) return kUnknown;
  untrack(p);
  return f(p);
}
}

// Stream capture: counted, so copies and launches made meanwhile are recorded, not waited for.
#define CKD_CAPTURE(SUFFIX)                                                                                    \
  cudaError_t cudaStreamBeginCapture##SUFFIX(cudaStream_t s, int mode) {                                       \
    static auto f = real<cudaError_t (*)(cudaStream_t, int)>("cudaStreamBeginCapture" #SUFFIX);              \
    if (!f) return kUnknown;                                                                                   \
    cudaError_t e = f(s, mode);                                                                                \
    if (e == 0) g_capturing++;                                                                                 \
    return e;                                                                                                  \
  }                                                                                                            \
  cudaError_t cudaStreamBeginCaptureToGraph##SUFFIX(cudaStream_t s, cudaGraph_t g, const void* deps,           \
                                                    const void* data, size_t n, int mode) {                    \
    using F = cudaError_t (*)(cudaStream_t, cudaGraph_t, const void*, const void*, size_t, int);               \
    static F f = real<F>("cudaStreamBeginCaptureToGraph" #SUFFIX);                                           \
    if (!f) return kUnknown;                                                                                   \
    cudaError_t e = f(s, g, deps, data, n, mode);                                                              \
    if (e == 0) g_capturing++;                                                                                 \
    return e;                                                                                                  \
  }                                                                                                            \
  cudaError_t cudaStreamEndCapture##SUFFIX(cudaStream_t s, cudaGraph_t* g) {                                   \
    static auto f = real<cudaError_t (*)(cudaStream_t, cudaGraph_t*)>("cudaStreamEndCapture" #SUFFIX);       \
    if (!f) return kUnknown;                                                                                   \
    cudaError_t e = f(s, g);                                                                                   \
    captured(e == 0 && g ? *g : nullptr);                                                                      \
    return e;                                                                                                  \
  }                                                                                                            \
  cudaError_t cudaGraphLaunch##SUFFIX(cudaGraphExec_t x, cudaStream_t s) {                                     \
    static auto f = real<cudaError_t (*)(cudaGraphExec_t, cudaStream_t)>("cudaGraphLaunch" #SUFFIX);         \
    return graph_launch(f, x, s);                                                                              \
  }

namespace {
// A capture ended (its graph, or null when it failed): its read-backs belong to that graph.
void captured(cudaGraph_t g) {
  std::lock_guard<std::mutex> lk(g_mutex);
  if (g_capturing.load() > 0) g_capturing--;
  if (g && !pending_reads().empty()) graph_reads()[g] = pending_reads();
  pending_reads().clear();
}

void instantiated(cudaError_t e, cudaGraphExec_t* x, cudaGraph_t g) {
  if (e != 0 || !x || !*x) return;
  std::lock_guard<std::mutex> lk(g_mutex);
  auto it = graph_reads().find(g);
  if (it != graph_reads().end()) exec_reads()[*x] = it->second;
}

// A graph runs its kernels (a launch: left out in the no-launch run, timed for the speed term,
// mapped memory swapped around it) and its captured copies; its read-backs are patched after it.
template <class F>
cudaError_t graph_launch(F f, cudaGraphExec_t x, cudaStream_t s) {
  cudaError_t e = launch(f, x, s);
  if (e != 0 || g_no_launch || !subst().active() || capturing()) return e;
  std::vector<Span> reads;
  {
    std::lock_guard<std::mutex> lk(g_mutex);
    auto it = exec_reads().find(x);
    if (it != exec_reads().end()) reads = it->second;
  }
  if (reads.empty()) return e;
  synchronize(s);
  for (auto& r : reads) returned(r.first, r.second);
  return e;
}

template <class F>
F cublas_fn(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}
}  // namespace

extern "C" {
CKD_CAPTURE()
CKD_CAPTURE(_ptsz)

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* x, cudaGraph_t g, unsigned long long flags) {
  static auto f = real<cudaError_t (*)(cudaGraphExec_t*, cudaGraph_t, unsigned long long)>("cudaGraphInstantiate");
  if (!f) return kUnknown;
  cudaError_t e = f(x, g, flags);
  instantiated(e, x, g);
  return e;
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* x, cudaGraph_t g, unsigned long long flags) {
  static auto f =
      real<cudaError_t (*)(cudaGraphExec_t*, cudaGraph_t, unsigned long long)>("cudaGraphInstantiateWithFlags");
  if (!f) return kUnknown;
  cudaError_t e = f(x, g, flags);
  instantiated(e, x, g);
  return e;
}

#define CKD_INSTANTIATE_PARAMS(SUFFIX)                                                                         \
  cudaError_t cudaGraphInstantiateWithParams##SUFFIX(cudaGraphExec_t* x, cudaGraph_t g, void* params) {        \
    static auto f = real<cudaError_t (*)(cudaGraphExec_t*, cudaGraph_t, void*)>(                               \
        "cudaGraphInstantiateWithParams" #SUFFIX);                                                             \
    if (!f) return kUnknown;                                                                                   \
    cudaError_t e = f(x, g, params);                                                                           \
    instantiated(e, x, g);                                                                                     \
    return e;                                                                                                  \
  }
CKD_INSTANTIATE_PARAMS()
CKD_INSTANTIATE_PARAMS(_ptsz)

// cuBLAS (the functions exist only where the program links libcublas; dlsym finds them there).
#define CKD_CUBLAS(I, SUFFIX)                                                                                  \
  cublasStatus_t cublasSetVector##SUFFIX(I n, I e, const void* x, I incx, void* y, I incy) {                   \
    using F = cublasStatus_t (*)(I, I, const void*, I, void*, I);                                              \
    static F f = cublas_fn<F>("cublasSetVector" #SUFFIX);                                                    \
    if (!f) return kCublasNotInitialized;                                                                      \
    return cublas_set<I>(x, n, e, incx, I(1), y, nullptr, false,                                               \
                         [&](const void* s, I inc) { return f(n, e, s, inc, y, incy); });                      \
  }                                                                                                            \
  cublasStatus_t cublasSetVectorAsync##SUFFIX(I n, I e, const void* x, I incx, void* y, I incy,                \
                                              cudaStream_t st) {                                               \
    using F = cublasStatus_t (*)(I, I, const void*, I, void*, I, cudaStream_t);                                \
    static F f = cublas_fn<F>("cublasSetVectorAsync" #SUFFIX);                                               \
    if (!f) return kCublasNotInitialized;                                                                      \
    return cublas_set<I>(x, n, e, incx, I(1), y, st, true,                                                     \
                         [&](const void* s, I inc) { return f(n, e, s, inc, y, incy, st); });                  \
  }                                                                                                            \
  cublasStatus_t cublasGetVector##SUFFIX(I n, I e, const void* x, I incx, void* y, I incy) {                   \
    using F = cublasStatus_t (*)(I, I, const void*, I, void*, I);                                              \
    static F f = cublas_fn<F>("cublasGetVector" #SUFFIX);                                                    \
    if (!f) return kCublasNotInitialized;                                                                      \
    cublasStatus_t s = f(n, e, x, incx, y, incy);                                                              \
    cublas_got<I>(s, y, n, e, incy, I(1), nullptr, false);                                                     \
    return s;                                                                                                  \
  }                                                                                                            \
  cublasStatus_t cublasGetVectorAsync##SUFFIX(I n, I e, const void* x, I incx, void* y, I incy,                \
                                              cudaStream_t st) {                                               \
    using F = cublasStatus_t (*)(I, I, const void*, I, void*, I, cudaStream_t);                                \
    static F f = cublas_fn<F>("cublasGetVectorAsync" #SUFFIX);                                               \
    if (!f) return kCublasNotInitialized;                                                                      \
    cublasStatus_t s = f(n, e, x, incx, y, incy, st);                                                          \
    cublas_got<I>(s, y, n, e, incy, I(1), st, true);                                                           \
    return s;                                                                                                  \
  }                                                                                                            \
  cublasStatus_t cublasSetMatrix##SUFFIX(I r, I c, I e, const void* a, I lda, void* b, I ldb) {                \
    using F = cublasStatus_t (*)(I, I, I, const void*, I, void*, I);                                           \
    static F f = cublas_fn<F>("cublasSetMatrix" #SUFFIX);                                                    \
    if (!f) return kCublasNotInitialized;                                                                      \
    return cublas_set<I>(a, c, e, lda, r, b, nullptr, false,                                                   \
                         [&](const void* s, I ld) { return f(r, c, e, s, ld, b, ldb); });                      \
  }                                                                                                            \
  cublasStatus_t cublasSetMatrixAsync##SUFFIX(I r, I c, I e, const void* a, I lda, void* b, I ldb,             \
                                              cudaStream_t st) {                                               \
    using F = cublasStatus_t (*)(I, I, I, const void*, I, void*, I, cudaStream_t);                             \
    static F f = cublas_fn<F>("cublasSetMatrixAsync" #SUFFIX);                                               \
    if (!f) return kCublasNotInitialized;                                                                      \
    return cublas_set<I>(a, c, e, lda, r, b, st, true,                                                         \
                         [&](const void* s, I ld) { return f(r, c, e, s, ld, b, ldb, st); });                 \
  }                                                                                                            \
  cublasStatus_t cublasGetMatrix##SUFFIX(I r, I c, I e, const void* a, I lda, void* b, I ldb) {                \
    using F = cublasStatus_t (*)(I, I, I, const void*, I, void*, I);                                           \
    static F f = cublas_fn<F>("cublasGetMatrix" #SUFFIX);                                                    \
    if (!f) return kCublasNotInitialized;                                                                      \
    cublasStatus_t s = f(r, c, e, a, lda, b, ldb);                                                             \
    cublas_got<I>(s, b, c, e, ldb, r, nullptr, false);                                                         \
    return s;                                                                                                  \
  }                                                                                                            \
  cublasStatus_t cublasGetMatrixAsync##SUFFIX(I r, I c, I e, const void* a, I lda, void* b, I ldb,             \
                                              cudaStream_t st) {                                               \
    using F = cublasStatus_t (*)(I, I, I, const void*, I, void*, I, cudaStream_t);                             \
    static F f = cublas_fn<F>("cublasGetMatrixAsync" #SUFFIX);                                               \
    if (!f) return kCublasNotInitialized;                                                                      \
    cublasStatus_t s = f(r, c, e, a, lda, b, ldb, st);                                                         \
    cublas_got<I>(s, b, c, e, ldb, r, st, true);                                                               \
    return s;                                                                                                  \
  }
CKD_CUBLAS(int, )
CKD_CUBLAS(int64_t, _64)
}
