// cudashim runtime: fibers for CUDA threads, worker threads for blocks, the runtime API.
//
// Compiled once per build variant (plain, asan) and linked into every program.
//
// Execution model. A launch spreads its blocks over worker threads (the calling thread is one
// of them). A worker runs one block start to finish: every CUDA thread of the block is a fiber
// on an mmap'd stack with a guard page. Fibers only switch at barriers (__syncthreads, warp
// operations) and at exit, so a thread that never meets a barrier runs to completion in one go,
// and its stack is handed straight to the next thread (the fast path: one stack per worker).
// The order in which runnable threads are resumed is the *schedule* (CUDASHIM_SCHEDULE =
// forward | reverse | random:<seed>); a program whose outputs depend on it has a race.
#include "cuda_runtime.h"
#include "kernel_inputs.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstdarg>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <signal.h>
#include <set>
#include <string>
#include <system_error>
#include <cerrno>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <map>
#include <pthread.h>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define CUDASHIM_FIBER_ASAN 1
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

__thread uint3 threadIdx;
__thread uint3 blockIdx;
__thread dim3 blockDim;
__thread dim3 gridDim;

#if !defined(__x86_64__)
#error "cudashim: the fiber context switch is written for x86-64"
#endif

// The runtime's own changes of protection go straight to the kernel: the run's access shim
// (validators/anticheat.py) refuses mprotect to everyone else, since a program could reopen
// device memory with it whatever its source calls it.
// Counted, for the tests of what a launch costs (tests/validators/test_cpu_device_arena.py).
extern "C" long _Cudashim_mprotect_calls;
long _Cudashim_mprotect_calls = 0;
static inline int own_mprotect(void* addr, size_t len, int prot) {
  __atomic_fetch_add(&_Cudashim_mprotect_calls, 1, __ATOMIC_RELAXED);
  long r;
  asm volatile("syscall" : "=a"(r) : "0"((long)SYS_mprotect), "D"(addr), "S"(len), "d"((long)prot)
               : "rcx", "r11", "memory");
  return r < 0 ? (errno = (int)-r, -1) : 0;
}

// Saves the callee-saved registers on the current stack, stores the stack pointer in *save and
// resumes the context whose stack pointer is `to`. The floating-point control words are not
// switched: no CUDA thread changes them, and ldmxcsr/fldcw cost more than the rest together.
asm(R"(
  .text
  .globl cudashim_switch
  .type cudashim_switch,@function
cudashim_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  popq %rcx
  jmpq *%rcx
  .size cudashim_switch, .-cudashim_switch
  .globl cudashim_entry
  .type cudashim_entry,@function
cudashim_entry:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size cudashim_entry, .-cudashim_entry
)");
extern "C" void cudashim_switch(void** save, void* to);
extern "C" void cudashim_entry();

namespace cudashim {

static const int kExitDeadlock = 86;
static const int kExitFatal = 87;

// ---------------------------------------------------------------- errors
static std::mutex g_err_mutex;
// Per host thread, as CUDA's: one thread's failed launch is not another's cudaGetLastError.
static thread_local cudaError_t g_last_error = cudaSuccess;
// Set by a failed device assert: like a GPU context after one, every later call reports it.
static std::atomic<int> g_sticky{cudaSuccess};
static std::atomic<bool> g_abort_launch{false};

void set_error(cudaError_t e) {
  std::lock_guard<std::mutex> lk(g_err_mutex);
  g_last_error = e;
}

static cudaError_t ret(cudaError_t e) {
  if (e != cudaSuccess) set_error(e);
  return e;
}

// ---------------------------------------------------------------- the runtime's logs
// What the runtime tells the validator through files (uploads, poisoned buffers, the kernel-work
// run's substitutions) is kept in memory and written only when the process ends: a log that
// grew while the program ran would tell it which check it is in (they exist in some runs only).
// The writer is the first exit handler registered (before main), so it runs after every exit
// handler, static destructor and .fini_array entry of the program, and it ends the process
// itself, so no thread of the program is left to look.
static std::mutex g_log_mutex;
static const size_t kMaxLogBytes = size_t(1) << 24;  // the engine reads no more
struct PendingLog { std::string path, text; };
static std::vector<PendingLog>& pending_logs() {
  static auto* v = new std::vector<PendingLog>();  // never destroyed: written at exit
  return *v;
}
static void shim_log(const char* path, const char* text, size_t n) {
  if (!path || !*path) return;
  std::lock_guard<std::mutex> lk(g_log_mutex);
  auto& logs = pending_logs();
  auto it = std::find_if(logs.begin(), logs.end(), [&](const PendingLog& l) { return l.path == path; });
  if (it == logs.end()) it = logs.insert(logs.end(), PendingLog{path, {}});
  if (it->text.size() + n <= kMaxLogBytes) it->text.append(text, n);
}
// CUDASHIM_LOG_NONCE=<hex> (the validator's, one per run): every log named in the settings is
// created here before any code of the program runs (O_EXCL: a fresh file of ours, never one the
// program made), held open, and written at exit through that descriptor (emptied, then
// "ckd-runtime-log <nonce>" and the text), if it still names the file made here. A log the
// program pre-created, made unwritable, planted lines in or replaced lacks the nonce, and the
// validator holds that against the program (validators/engine.py `_log_tampering`). The program
// shares this process and could read the nonce from our memory: this raises the bar, no more.
struct HeldLog { const char* path; int fd; dev_t dev; ino_t ino; };
static HeldLog g_held_logs[4];
static int g_n_held_logs;
static bool g_held_logs_written;
static const char* shim_env(const char* name);
[[noreturn]] void fatal(const char* fmt, ...);
static void open_held_logs() {
  const char* nonce = shim_env("CUDASHIM_LOG_NONCE");
  if (!nonce || !*nonce) return;
  for (const char* name : {"CUDASHIM_KERNEL_INPUTS_LOG", "CUDASHIM_UPLOAD_LOG", "CUDASHIM_POISON_LOG",
                           "CUDASHIM_RUN_TIMING"}) {
    const char* path = shim_env(name);
    if (!path || !*path || g_n_held_logs >= 4) continue;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) fatal("cudashim: cannot create the runtime's log %s", path);
    g_held_logs[g_n_held_logs++] = HeldLog{path, fd, st.st_dev, st.st_ino};
  }
}
static void write_held_logs() {  // caller holds g_log_mutex
  if (g_held_logs_written) return;  // once: a second pass would empty them
  g_held_logs_written = true;
  for (int i = 0; i < g_n_held_logs; i++) {
    const HeldLog& h = g_held_logs[i];
    std::string text = std::string("ckd-runtime-log ") + shim_env("CUDASHIM_LOG_NONCE") + "\n";
    for (const PendingLog& l : pending_logs())
      if (l.path == h.path) text += l.text;
    struct stat st;  // the program may have closed ours and opened another file in its place
    if (fstat(h.fd, &st) != 0 || st.st_dev != h.dev || st.st_ino != h.ino || ftruncate(h.fd, 0) != 0) continue;
    for (size_t off = 0; off < text.size();) {
      ssize_t w = pwrite(h.fd, text.data() + off, text.size() - off, (off_t)off);
      if (w <= 0) break;
      off += (size_t)w;
    }
  }
}
static bool is_held_log(const std::string& path) {
  for (int i = 0; i < g_n_held_logs; i++)
    if (path == g_held_logs[i].path) return true;
  return false;
}
static void note_run_timing();
static void write_logs() {
  note_run_timing();  // the split ends here, on every way out
  std::lock_guard<std::mutex> lk(g_log_mutex);
  write_held_logs();
  for (const PendingLog& l : pending_logs()) {
    if (is_held_log(l.path)) continue;
    // Raw: the access-log shim (LD_PRELOAD) would list the runtime's own files.
    int fd = (int)syscall(SYS_openat, AT_FDCWD, l.path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) continue;
    for (size_t off = 0; off < l.text.size();) {
      ssize_t w = write(fd, l.text.data() + off, l.text.size() - off);
      if (w <= 0) break;
      off += (size_t)w;
    }
    close(fd);
  }
  pending_logs().clear();
}
static pid_t g_run_pid;  // the process the run started as (a forked child writes no logs)
static void write_logs_and_end(int status, void*) {
  fflush(nullptr);  // the program's buffered output: exit_group skips stdio's own clean-up
  write_logs();
  syscall(SYS_exit_group, status);
}

[[noreturn]] static void vfatal(int code, const char* fmt, va_list ap) {
  fflush(stdout);
  write_logs();
  char buf[4096];
  // CUDASHIM_FATAL_TAG=<hex> (the validator's, one per run): the runtime's own words carry it
  // ("cudashim[<tag>]: ..."), so a verdict the validator takes from them (needs a GPU) is not
  // one the program can print.
  const char* nonce = shim_env("CUDASHIM_FATAL_TAG");
  int head = 0;
  if (nonce && *nonce && strncmp(fmt, "cudashim: ", 10) == 0) {
    int len = 0;
    while (nonce[len] && nonce[len] != ' ' && len < 64) len++;
    head = snprintf(buf, 128, "cudashim[%.*s]", len, nonce);
    fmt += 8;  // the ": ..." after "cudashim"
  }
  int n = vsnprintf(buf + head, sizeof buf - head, fmt, ap);
  if (n < 0) n = 0;
  n += head;
  if (n > (int)sizeof buf - 2) n = sizeof buf - 2;
  buf[n++] = '\n';
  ssize_t w = write(2, buf, n);
  (void)w;
  _exit(code);
}

[[noreturn]] void fatal(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfatal(kExitFatal, fmt, ap);
}

[[noreturn]] static void deadlock(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfatal(kExitDeadlock, fmt, ap);
}

// Where CUDA leaves behaviour undefined but GPUs agree (threads that exited do not hold a
// barrier; lanes that exited are not waited for by a warp operation), the emulator behaves as the
// GPU and says so, once per message, on stderr: "cudashim: portability: ..." (the validator reads
// these lines into the verdict's notes; a dataset build can filter on them).
static void portability(const char* fmt, ...) {
  static std::mutex m;
  static auto* seen = new std::set<std::string>();
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  std::lock_guard<std::mutex> lk(m);
  if (seen->size() >= 64 || !seen->insert(msg).second) return;
  std::string line = std::string("cudashim: portability: ") + msg + "\n";
  if (write(2, line.data(), line.size()) < 0) {
  }
}

// ---------------------------------------------------------------- configuration
// The shim's settings (CUDASHIM_*) are read here before any constructor or main() runs, then
// removed from the environment and their bytes wiped from the initial environment block (which
// /proc/self/environ shows): the program cannot read which schedule, worker count or check it
// runs under. The validator pads every value to a fixed width, so the wiped block has the same
// shape in every run of a check.
static char g_shim_env[24][2][256];
static int g_shim_nenv;
static const char* shim_env(const char* name);

// CUDASHIM_KERNEL_INPUTS=<file>: the kernel-work run (runtime/kernel_inputs.h). The file is
// read here, before any code of the program runs, and unlinked, so the program never finds it
// on disk; CUDASHIM_KERNEL_INPUTS_LOG receives which bytes of each input the device got in
// place of the host's ("up <input> <begin> <end>") and how many it gave back ("down <input> <n>").
static ckd_subst::Substitution g_subst;
static std::mutex g_subst_mutex;
// The second draw stays unreadable (PROT_NONE) except inside the runtime's copies, so a program
// that scans its memory for it needs to undo the protection first.
static void* g_subst_map = nullptr;
static size_t g_subst_len = 0;
struct SubstOpen {
  SubstOpen() { if (g_subst_map) own_mprotect(g_subst_map, g_subst_len, PROT_READ); }
  ~SubstOpen() { if (g_subst_map) own_mprotect(g_subst_map, g_subst_len, PROT_NONE); }
};

static void load_kernel_inputs() {
  const char* path = shim_env("CUDASHIM_KERNEL_INPUTS");
  if (!path || !*path) return;
  int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fatal("cudashim: cannot open the kernel-input file %s", path);
  struct stat st;
  if (fstat(fd, &st) != 0) fatal("cudashim: cannot read the kernel-input file %s", path);
  if (st.st_size == 0) {  // every other run's: removed alike, nothing replaced
    close(fd);
    syscall(SYS_unlinkat, AT_FDCWD, path, 0);
    return;
  }
  // Read into anonymous memory, not mapped: a mapping of the (deleted) file would name it in
  // /proc/self/maps and keep its blocks in the work folder's tmpfs (statfs), both of which
  // would tell the program it is in the kernel-work run.
  void* m = mmap(nullptr, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  for (size_t off = 0; m != MAP_FAILED && off < (size_t)st.st_size;) {
    ssize_t r = read(fd, static_cast<char*>(m) + off, (size_t)st.st_size - off);
    if (r <= 0) fatal("cudashim: cannot read the kernel-input file %s", path);
    off += (size_t)r;
  }
  close(fd);
  syscall(SYS_unlinkat, AT_FDCWD, path, 0);  // raw: the access-log shim would name it
  if (m == MAP_FAILED || !ckd_subst::parse(static_cast<const unsigned char*>(m), (size_t)st.st_size, g_subst))
    fatal("cudashim: malformed kernel-input file %s", path);
  g_subst_map = m;
  g_subst_len = (size_t)st.st_size;
  own_mprotect(m, g_subst_len, PROT_NONE);
}

static void log_kernel_inputs(const char* kind, size_t input, size_t a, size_t b) {
  static const char* path = shim_env("CUDASHIM_KERNEL_INPUTS_LOG");
  if (!path || !*path) return;
  char line[96];
  int n = kind[0] == 'u' ? snprintf(line, sizeof line, "up %zu %zu %zu\n", input, a, b)
                         : snprintf(line, sizeof line, "down %zu %zu\n", input, a);
  shim_log(path, line, (size_t)n);
}

static void kernel_input_upload(const void* src, void* dst, size_t n) {
  if (!g_subst.active()) return;
  std::lock_guard<std::mutex> lk(g_subst_mutex);
  SubstOpen open;
  std::vector<size_t> before(g_subst.inputs.size());
  for (size_t i = 0; i < before.size(); i++) before[i] = g_subst.inputs[i].uploaded.size();
  g_subst.on_upload(src, dst, n);
  for (size_t i = 0; i < before.size(); i++)
    for (size_t k = before[i]; k < g_subst.inputs[i].uploaded.size(); k++)
      log_kernel_inputs("up", i, g_subst.inputs[i].uploaded[k].first, g_subst.inputs[i].uploaded[k].second);
}

static void kernel_input_download(void* dst, size_t n) {
  if (!g_subst.active()) return;
  std::lock_guard<std::mutex> lk(g_subst_mutex);
  SubstOpen open;
  std::vector<size_t> before(g_subst.inputs.size());
  for (size_t i = 0; i < before.size(); i++) before[i] = g_subst.inputs[i].returned;
  g_subst.on_download(dst, n);
  for (size_t i = 0; i < before.size(); i++)
    if (g_subst.inputs[i].returned > before[i]) log_kernel_inputs("down", i, g_subst.inputs[i].returned - before[i], 0);
}

// CUDASHIM_SIZES=<v0>,<v1>,...: a case's sizes, for a program built once for all its cases
// (toolchain.py, "run-time sizes"): its size macros read `cudashim_case_sizes[i]`, in the
// order of their names. Filled before any code of the program runs, like a -D value would be.
#define CUDASHIM_MAX_CASE_SIZES 16
extern "C" long long cudashim_case_sizes[CUDASHIM_MAX_CASE_SIZES];
long long cudashim_case_sizes[CUDASHIM_MAX_CASE_SIZES];
static void load_case_sizes() {
  const char* v = shim_env("CUDASHIM_SIZES");
  for (int i = 0; v && *v && i < CUDASHIM_MAX_CASE_SIZES; i++) {
    char* end = nullptr;
    cudashim_case_sizes[i] = strtoll(v, &end, 10);
    if (end == v) fatal("cudashim: malformed CUDASHIM_SIZES '%s'", shim_env("CUDASHIM_SIZES"));
    v = *end == ',' ? end + 1 : end;
  }
}

static double g_run_start;
static double mono_seconds();
static void capture_shim_env(int, char**, char** envp) {
  g_run_start = mono_seconds();  // before any code of the program: the start of the split
  if (!envp) return;
  char** out = envp;
  for (char** e = envp; *e; e++) {
    if (strncmp(*e, "CUDASHIM_", 9) != 0) { *out++ = *e; continue; }
    const char* eq = strchr(*e, '=');
    if (eq && g_shim_nenv < 24) {
      size_t kn = std::min<size_t>(eq - *e, 255);
      memcpy(g_shim_env[g_shim_nenv][0], *e, kn);
      g_shim_env[g_shim_nenv][0][kn] = 0;
      size_t vn = std::min<size_t>(strlen(eq + 1), 255);
      memcpy(g_shim_env[g_shim_nenv][1], eq + 1, vn);
      while (vn && g_shim_env[g_shim_nenv][1][vn - 1] == ' ') vn--;  // the padding
      g_shim_env[g_shim_nenv][1][vn] = 0;
      g_shim_nenv++;
    }
    memset(*e, 0, strlen(*e));
  }
  *out = nullptr;
#ifndef CUDASHIM_LIBRARY
  on_exit(write_logs_and_end, nullptr);
  g_run_pid = getpid();
  at_quick_exit([] { fflush(nullptr); write_logs(); });
#endif
  load_case_sizes();
  load_kernel_inputs();
  open_held_logs();
}
#ifdef CUDASHIM_LIBRARY
// Library mode (libcudashim.so, loaded once per process with RTLD_GLOBAL by the PyTorch
// extension loader, validators/cpu/torch_cuda.py): a shared object has no .preinit_array and
// the process is an interpreter that ran long before us, so the settings are captured when the
// library loads; the logs are written at exit without ending the process early (Python's own
// exit handlers must still run).
extern "C" char** environ;  // C linkage: the process environment, though declared in the namespace
static void write_logs_at_exit() { write_logs(); }
__attribute__((constructor)) static void capture_shim_env_library() {
  capture_shim_env(0, nullptr, environ);
  atexit(write_logs_at_exit);
}
#else
__attribute__((section(".preinit_array"), used)) static void (*g_capture_shim_env)(int, char**, char**) = capture_shim_env;
#if !defined(CUDASHIM_FIBER_ASAN)
// A host fault before the first CUDA call (a malloc that returned NULL) is reported too, not a
// bare signal (AddressSanitizer builds have its handler).
static void install_fault_handlers();
__attribute__((constructor)) static void install_fault_handlers_at_start() { install_fault_handlers(); }
#endif
#endif

#ifndef CUDASHIM_LIBRARY
// `_exit` and `_Exit` end the process without its exit handlers: a program that flushes its
// output and calls `_exit(0)` (to skip slow destructors) left no runtime log, and its run was
// rejected as one whose log was tampered with. The logs are written first, by the run's own
// process. (`quick_exit` runs the handler registered at the capture.)
extern "C" [[noreturn]] void _exit(int status) {
  if (getpid() == cudashim::g_run_pid) cudashim::write_logs();
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}
extern "C" [[noreturn]] void _Exit(int status) noexcept { _exit(status); }
#endif

// The capture above is worth something only if no code of the program ran before it. The
// build links the runtime first, so its entry leads the executable's .preinit_array; code the
// dynamic loader runs even earlier (an ifunc resolver, IRELATIVE relocations) and a
// .preinit_array entry of the program placed ahead of ours (sanitizer runtimes' entries live in
// their own libraries) are refused here, before main, whatever they read.
#ifndef CUDASHIM_LIBRARY
extern "C" {
extern void (*__preinit_array_start[])(int, char**, char**) __attribute__((visibility("hidden")));
extern void (*__preinit_array_end[])(int, char**, char**) __attribute__((visibility("hidden")));
extern char __executable_start[] __attribute__((visibility("hidden")));
extern char etext[] __attribute__((visibility("hidden")));
}

static int main_has_irelative(struct dl_phdr_info* info, size_t, void* found) {
  // The first object reported is the executable.
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  uintptr_t rela = 0, jmprel = 0;
  size_t relasz = 0, pltsz = 0;
  for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
    if (dyn->d_tag == DT_RELA) rela = dyn->d_un.d_ptr;
    if (dyn->d_tag == DT_RELASZ) relasz = dyn->d_un.d_val;
    if (dyn->d_tag == DT_JMPREL) jmprel = dyn->d_un.d_ptr;
    if (dyn->d_tag == DT_PLTRELSZ) pltsz = dyn->d_un.d_val;
  }
  // The loader rewrites these addresses in place for a position-independent executable.
  auto scan = [&](uintptr_t at, size_t bytes) {
    if (!at || !bytes) return;
    if (at < info->dlpi_addr) at += info->dlpi_addr;
    const ElfW(Rela)* r = reinterpret_cast<const ElfW(Rela)*>(at);
    for (size_t i = 0; i < bytes / sizeof(ElfW(Rela)); i++)
      if (ELF64_R_TYPE(r[i].r_info) == R_X86_64_IRELATIVE) *static_cast<bool*>(found) = true;
  };
  scan(rela, relasz);
  scan(jmprel, pltsz);
  return 1;
}

static void check_nothing_ran_first(int, char**, char**) {
  // Our two entries are adjacent, in either order.
  for (auto* e = __preinit_array_start;
       e < __preinit_array_end && *e != capture_shim_env && *e != check_nothing_ran_first; e++) {
    const char* f = reinterpret_cast<const char*>(*e);
    if (f >= __executable_start && f < etext)
      fatal("cudashim: the program runs code before the runtime starts (a .preinit_array entry "
            "ahead of the runtime's): not supported");
  }
  bool irelative = false;
  dl_iterate_phdr(main_has_irelative, &irelative);
  if (irelative)
    fatal("cudashim: the program runs code before the runtime starts (an ifunc resolver, e.g. "
          "__attribute__((ifunc)) or target_clones): not supported");
}
__attribute__((section(".preinit_array"), used)) static void (*g_check_nothing_ran_first)(int, char**, char**) =
    check_nothing_ran_first;
#endif  // CUDASHIM_LIBRARY

static const char* shim_env(const char* name) {
  for (int i = 0; i < g_shim_nenv; i++)
    if (!strcmp(g_shim_env[i][0], name)) return g_shim_env[i][1];
  return getenv(name);  // a program run by hand, or a runtime without the pre-init hook
}

// ---------------------------------------------------------------- the run's time split
// CUDASHIM_RUN_TIMING=<file>: where the run's time went, for `validators run`. CLOCK_MONOTONIC
// is one clock for every process of the machine, so the validator sets the runtime's start
// (before any constructor of the program) against the moment it started the sandbox. Kernel
// launches (synchronous here) and copies or fills are summed as wall time; the outermost span
// of a thread counts alone (a 2D copy's rows are one copy). The file is written with the other
// logs at exit, in the format the cuda interposer writes too (validators/run_timing.py).
static double mono_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static const char* run_timing_path() {
  static const char* path = shim_env("CUDASHIM_RUN_TIMING");
  return path && *path ? path : nullptr;
}
static std::atomic<long long> g_span_ns[2], g_span_count[2];
static thread_local int t_span_depth;
struct RunSpan {
  enum Kind { Kernels = 0, Copies = 1 };
  Kind kind;
  timespec t0{};
  bool outer;
  explicit RunSpan(Kind k) : kind(k), outer(run_timing_path() && t_span_depth++ == 0) {
    if (outer) clock_gettime(CLOCK_MONOTONIC, &t0);
  }
  ~RunSpan() {
    if (!outer) {
      if (run_timing_path()) t_span_depth--;
      return;
    }
    timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    g_span_ns[kind] += (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
    g_span_count[kind]++;
    t_span_depth--;
  }
};
static void note_run_timing() {
  const char* path = run_timing_path();
  if (!path) return;
  char text[256];
  int n = snprintf(text, sizeof text, "start %.9f\nend %.9f\nkernels %.9f %lld\ncopies %.9f %lld\n",
                   g_run_start, mono_seconds(), (double)g_span_ns[0].load() * 1e-9, g_span_count[0].load(),
                   (double)g_span_ns[1].load() * 1e-9, g_span_count[1].load());
  shim_log(path, text, (size_t)n);
}

// CUDASHIM_NO_LAUNCH=1: every kernel launch is a no-op (the validator's differential check:
// outputs that still match the reference do not depend on the kernels).
static bool no_launch() {
  static const bool on = [] { const char* v = shim_env("CUDASHIM_NO_LAUNCH"); return v && v[0] == '1'; }();
  return on;
}

// In the no-launch run, every host-to-device upload is noted (its length and a hash) in
// CUDASHIM_UPLOAD_LOG: an output that the host uploaded whole before any kernel ran was
// computed on the host, and a kernel only copied it. The hash is one numpy can compute fast
// (validators/engine.py `upload_hash`).
// CUDASHIM_LOG_UPLOADS=1 notes them in any run, with the memory kernels read in place at each
// launch (managed, pinned, registered): the kernel-work check compares what reached the device
// when the host read other inputs.
static bool log_uploads() {
  static const bool on = [] { const char* v = shim_env("CUDASHIM_LOG_UPLOADS"); return v && v[0] == '1'; }();
  return on;
}
static void note_upload_impl(const void* src, size_t n) {
  static const char* path = shim_env("CUDASHIM_UPLOAD_LOG");
  if (!(no_launch() || log_uploads()) || !path || !*path || !src || n == 0) return;
  const unsigned long long C0 = 0x9E3779B97F4A7C15ull, C1 = 0xBF58476D1CE4E5B9ull, C2 = 0x94D049BB133111EBull;
  unsigned long long h = (unsigned long long)n * C0;
  const unsigned char* p = static_cast<const unsigned char*>(src);
  size_t words = (n + 7) / 8;
  for (size_t i = 0; i < words; i++) {
    unsigned long long w = 0;
    memcpy(&w, p + i * 8, std::min<size_t>(8, n - i * 8));
    h += (w ^ ((unsigned long long)i * C1)) * C2;
  }
  char line[64];
  shim_log(path, line, (size_t)snprintf(line, sizeof line, "%zu %llu\n", n, h));
}

enum class Order { Forward, Reverse, Random };
struct Config {
  Order order = Order::Forward;
  unsigned long long seed = 0;
  int workers = 1;
  size_t stack_bytes = 0;
  bool lockstep = true;  // CUDASHIM_LOCKSTEP=0: lockstep copies are not used (side-by-side checks)
};

static Config load_config() {
  Config c;
  const char* s = shim_env("CUDASHIM_SCHEDULE");
  std::string v = s ? s : "forward";
  if (v == "forward" || v == "default" || v.empty()) {
    c.order = Order::Forward;
  } else if (v == "reverse") {
    c.order = Order::Reverse;
  } else if (v.rfind("random", 0) == 0) {
    c.order = Order::Random;
    c.seed = v.size() > 7 ? strtoull(v.c_str() + 7, nullptr, 10) : 1;
  } else {
    fatal("cudashim: unknown CUDASHIM_SCHEDULE '%s' (forward, reverse, random:<seed>)", v.c_str());
  }
#if defined(CUDASHIM_ASAN)
  c.workers = 1;  // __shared__ is a plain static in this build: blocks must not overlap.
#elif defined(CUDASHIM_RACE)
  c.workers = 1;  // the race detector's bookkeeping is single-threaded
#else
  unsigned hw = std::thread::hardware_concurrency();
  c.workers = hw ? (int)hw : 1;
  if (const char* w = shim_env("CUDASHIM_WORKERS")) c.workers = std::max(1, atoi(w));
#endif
#if defined(CUDASHIM_FIBER_ASAN)
  c.stack_bytes = 512 * 1024;
#else
  c.stack_bytes = 128 * 1024;
#endif
  if (const char* l = shim_env("CUDASHIM_LOCKSTEP")) c.lockstep = l[0] != '0';
  if (const char* k = shim_env("CUDASHIM_STACK_KB")) c.stack_bytes = std::max<size_t>(16, strtoull(k, nullptr, 10)) * 1024;
  return c;
}

static const Config& config() {
  static Config c = load_config();
  return c;
}

// ---------------------------------------------------------------- fibers
// YIELDED: runnable, but handed its turn on from a spin loop (_Spin_point_slow); it runs again
// once no other thread of the block can. WAIT_SYNC: waiting on a libcu++ barrier, latch or
// semaphore (_Sync_wait) until another thread of the block changes it (_Sync_notify).
enum State : int { NEW, RUNNABLE, RUNNING, WAIT_BLOCK, WAIT_WARP, DONE, WAIT_GRID, YIELDED, WAIT_SYNC };

struct Stack {
  char* lo;  // lowest usable byte (just above the guard page)
  size_t size;
  size_t color;  // bytes left unused at the top, different per stack (see new_stack)
};

struct Fiber {
  void* sp = nullptr;
  Stack stack{nullptr, 0, 0};
  uint3 tid{0, 0, 0};
  int lin = 0;
  int state = NEW;
  // What the fiber waits for.
  unsigned line = 0;
  const char* file = "";
  int kind = 0;
  unsigned mask = 0;
  unsigned asked = 0;  // the mask as the program passed it (a deadlock's description)
  unsigned long long value = 0;
  int param = 0;
  int width = 32;
  int mode = 0;
  unsigned long long result = 0;
  unsigned spins = 0;  // spin points passed since it last handed its turn on
  const void* sync_obj = nullptr;  // WAIT_SYNC: the object and what waits on it
  const char* sync_what = "";
  bool sync_block = true;  // the object has block scope
};

struct Job;

struct Worker {
  std::vector<Fiber> fibers;
  std::vector<int> order;  // schedule: thread indices in the order they are preferred
  std::vector<int> pos;    // inverse of order
  std::vector<uint3> tids;  // threadIdx of each linear thread index (direct mode's loop)
  int cursor = 0;          // no runnable thread sits before this position of `order`
  std::vector<Stack> free_stacks;
  std::vector<unsigned> warp_arrived;
  std::vector<unsigned> warp_done;
  void* sched_sp = nullptr;
  Fiber* cur = nullptr;
  bool direct = false;  // running a barrier-free kernel's threads as plain calls
  bool coop = false;    // running one block of a cooperative launch (see run_cooperative)
  int grid_waiting = 0;  // threads of the block waiting at grid.sync()
  unsigned spins = 0;    // spin points passed since this cooperative block got its turn
  Job* job = nullptr;    // the normal launch whose blocks this worker takes (drain)
  unsigned long long stuck = 0;  // spin passes of this block in rounds where every thread spun
  std::chrono::steady_clock::time_point round_began;  // its current round of spinning (pause_waiting)
  int yielded = 0;       // fibers in state YIELDED
  int sync_waiting = 0;  // fibers in state WAIT_SYNC
  unsigned direct_lin = 0;
  const LaunchSpec* spec = nullptr;
  int nthreads = 0;
  int live = 0;
  int exited = 0;
  int bar_arrived = 0;
  unsigned long long block_lin = 0;
  unsigned long long block_serial = 0;  // unique per block run (block_serial())
  void* smem = nullptr;
  size_t smem_cap = 0;
  std::mt19937_64 rng;
#if defined(CUDASHIM_FIBER_ASAN)
  const void* sched_bottom = nullptr;
  size_t sched_size = 0;
#endif
  char* altstack = nullptr;
#ifdef CUDASHIM_ASAN
  // The block's static __shared__ variables (plain statics in this build, shared by every
  // block): saved when a block of a cooperative launch, or of a launch run by turns, hands the
  // turn on, restored when it gets it back.
  std::vector<std::pair<void*, size_t>> block_shared;
  std::vector<char> block_saved;
#endif
#if defined(CUDASHIM_ASAN) || defined(CUDASHIM_RACE)
  // Its block's turn came (blocks run by turns: block_waits_outside), under Job::tm; one
  // variable per worker, so a hand-over wakes only the block it is for.
  std::condition_variable turn_cv;
#endif
#ifdef CUDASHIM_RACE
  // race_detector.h: when the block's last barrier completed, the current grid.sync() phase,
  // and per thread the last warp operation and the last atomic or fence it took part in.
  unsigned long long race_block_time = 0, race_round_time = 0;
  unsigned race_round = 0;
  std::vector<unsigned long long> race_lane_sync, race_lane_atomic;
#endif
};

static thread_local Worker* tw = nullptr;
static thread_local const char* t_kernel = nullptr;
static const size_t kPage = 4096;

#include "race_detector.h"

static void install_altstack(Worker* w);

static Worker* worker() {
  if (!tw) {
    tw = new Worker();
    install_altstack(tw);
  }
  return tw;
}

static Stack new_stack() {
  size_t size = config().stack_bytes;
  void* m = mmap(nullptr, size + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) fatal("cudashim: cannot map a %zu-byte stack for a CUDA thread", size);
  own_mprotect(m, kPage, PROT_NONE);  // guard page: a stack overflow faults instead of corrupting
  // Stacks are a multiple of 4 KiB apart, so the hot top frames of a block's fibers would all
  // fall in the same cache sets; a different offset per stack spreads them.
  static thread_local unsigned serial = 0;
  size_t color = (size_t)((serial++ * 17) % 256) * 64;
#if defined(CUDASHIM_FIBER_ASAN)
  // The mapping may reuse addresses whose shadow an earlier owner left poisoned.
  ASAN_UNPOISON_MEMORY_REGION(static_cast<char*>(m) + kPage, size);
#endif
  return Stack{static_cast<char*>(m) + kPage, size, color};
}

// A finished fiber's stack goes back to the pool. Its last frames (fiber_main, exit_fiber and the
// calls it makes, switch_to_scheduler; after an aborted launch, the kernel's own frames too) never
// return, so the redzones AddressSanitizer poisoned in them on entry are never cleared: the next
// CUDA thread on this stack would find them under its own locals (whose shadow a frame's prologue
// does not clear; it only poisons the redzones around them) and report "unknown-crash" or
// "stack-buffer-underflow" on a correct kernel. Everything from the fiber's last saved stack
// pointer to the top of the stack is dead now; frames below it returned and cleared their own.
static inline void release_stack(Worker* w, Fiber* f) {
#if defined(CUDASHIM_FIBER_ASAN)
  const uintptr_t lo = reinterpret_cast<uintptr_t>(f->stack.lo), hi = lo + f->stack.size;
  uintptr_t sp = reinterpret_cast<uintptr_t>(f->sp) & ~uintptr_t(7);
  if (sp < lo || sp > hi) sp = lo;
  ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<void*>(sp), hi - sp);
#endif
  w->free_stacks.push_back(f->stack);
}

static inline void switch_to_fiber(Worker* w, Fiber* f) {
#if defined(CUDASHIM_FIBER_ASAN)
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, f->stack.lo, f->stack.size);
  cudashim_switch(&w->sched_sp, f->sp);
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  cudashim_switch(&w->sched_sp, f->sp);
#endif
}

static inline void switch_to_scheduler(Worker* w, Fiber* f, bool finished) {
#if defined(CUDASHIM_FIBER_ASAN)
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(finished ? nullptr : &fake, w->sched_bottom, w->sched_size);
  cudashim_switch(&f->sp, w->sched_sp);
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  (void)finished;
  cudashim_switch(&f->sp, w->sched_sp);
#endif
}

static void check_block_barrier(Worker* w);
static void describe_and_die(Worker* w);
[[noreturn]] void _Sync_needs_gpu(const char* what, const char* file, unsigned line);

static inline void exit_fiber(Worker* w, Fiber* f);

static void fiber_main(Fiber* f) {
  Worker* w = tw;
#if defined(CUDASHIM_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, &w->sched_bottom, &w->sched_size);
#endif
  w->spec->body(w->spec->arg);
  exit_fiber(w, f);
}

static void complete_warp_op(Worker* w, int warp, unsigned group);
static const char* warp_op_name(int kind);
static std::string where(const Fiber& f);

// A lane exits while lanes of its warp wait at a warp operation whose mask names it: GPUs do not
// wait for an exited lane, so the operation completes with the lanes that are left.
static void release_warp_waiters(Worker* w, int warp, int lane) {
  const unsigned bit = 1u << lane;
  unsigned group = 0;
  Fiber* lanes = &w->fibers[warp * 32];
  for (unsigned g = w->warp_arrived[warp]; g; g &= g - 1) {
    Fiber& o = lanes[__builtin_ctz(g)];
    if (o.state == WAIT_WARP && o.kind != _Wop_COALESCE && !(o.kind == _Wop_SYNC && o.param == 1) &&
        (o.mask & bit)) {
      o.mask &= ~bit;
      group = o.mask;
    }
  }
  if (group == 0) return;
  portability("%s at %s in kernel '%s' names lanes in its mask that exited without reaching it "
              "(undefined in CUDA; GPUs since Volta do not wait for them)",
              warp_op_name(lanes[__builtin_ctz(group)].kind), where(lanes[__builtin_ctz(group)]).c_str(),
              w->spec->name);
  if ((w->warp_arrived[warp] & group) != group) return;
  bool same = true;
  for (unsigned g = group; g; g &= g - 1) same &= lanes[__builtin_ctz(g)].mask == group;
  if (same) complete_warp_op(w, warp, group);
}

// Inlined into fiber_main: a call to it would be a call to a function that never returns, before
// which AddressSanitizer unpoisons "the rest of the stack" it cannot find on a fiber's stack.
__attribute__((always_inline)) static inline void exit_fiber(Worker* w, Fiber* f) {
#if defined(CUDASHIM_FIBER_ASAN)
  {
    // The frames below this one are dead, but redzones that AddressSanitizer poisoned in them
    // were found still poisoned where release_warp_waiters' frame now lies (a false
    // "stack-buffer-underflow" in the runtime, the program's verdict: a kernel whose lanes exit
    // while others wait at a shuffle in a device function). Clear the top 4 KiB below us, where
    // the calls made from here land; deeper stale poison has not been seen.
    uintptr_t lo = reinterpret_cast<uintptr_t>(f->stack.lo);
    uintptr_t top = reinterpret_cast<uintptr_t>(__builtin_frame_address(0)) - 16;
    uintptr_t from = top - lo > 4096 ? top - 4096 : lo;
    ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<void*>(from), top - from);
  }
#endif
  f->state = DONE;
  w->live--;
  w->exited++;
  w->warp_done[f->lin / 32] |= 1u << (f->lin % 32);
  if (w->warp_arrived[f->lin / 32]) release_warp_waiters(w, f->lin / 32, f->lin % 32);
  if (w->bar_arrived > 0 && !g_abort_launch.load(std::memory_order_relaxed)) check_block_barrier(w);
  switch_to_scheduler(w, f, true);
  __builtin_unreachable();
}

static void start_fiber(Worker* w, Fiber* f) {
  if (w->free_stacks.empty()) w->free_stacks.push_back(new_stack());
  f->stack = w->free_stacks.back();
  w->free_stacks.pop_back();
  // Initial frame popped by cudashim_switch: r15..rbp, then the return address; after `ret`
  // the stack is 16-byte aligned for the call in cudashim_entry.
  uintptr_t top = (reinterpret_cast<uintptr_t>(f->stack.lo) + f->stack.size - f->stack.color) & ~uintptr_t(15);
  uint64_t* sp = reinterpret_cast<uint64_t*>(top - 72);
  sp[0] = 0;                                             // r15
  sp[1] = 0;                                             // r14
  sp[2] = reinterpret_cast<uint64_t>(&fiber_main);       // r13: function
  sp[3] = reinterpret_cast<uint64_t>(f);                 // r12: argument
  sp[4] = 0;                                             // rbx
  sp[5] = 0;                                             // rbp
  sp[6] = reinterpret_cast<uint64_t>(&cudashim_entry);  // return address
  f->sp = sp;
  f->state = RUNNING;
  w->cur = f;
  threadIdx = f->tid;
  switch_to_fiber(w, f);
  w->cur = nullptr;
  if (f->state == DONE) release_stack(w, f);
}

static void resume_fiber(Worker* w, Fiber* f) {
  f->state = RUNNING;
  w->cur = f;
  threadIdx = f->tid;
  switch_to_fiber(w, f);
  w->cur = nullptr;
  if (f->state == DONE) release_stack(w, f);
}

static inline void yield(Worker* w, Fiber* f) { switch_to_scheduler(w, f, false); }

// ---------------------------------------------------------------- block barrier
static std::string where(const Fiber& f) { return std::string(f.file) + ":" + std::to_string(f.line); }

static std::string block_name(Worker* w) {
  char b[160];
  snprintf(b, sizeof b, "kernel '%s' block (%u,%u,%u)", w->spec->name, blockIdx.x, blockIdx.y, blockIdx.z);
  return b;
}

static void check_block_barrier(Worker* w) {
  if (w->bar_arrived < w->live) return;
  Fiber* first = nullptr;
  for (Fiber& f : w->fibers)
    if (f.state == WAIT_BLOCK) {
      first = &f;
      break;
    }
  if (w->exited > 0) {
    portability("__syncthreads() at %s in kernel '%s' was reached by %d of %d threads of a block; the "
                "others had exited (undefined in CUDA; GPUs since Volta release the barrier without them)",
                where(*first).c_str(), w->spec->name, w->bar_arrived, w->nthreads);
  }
  int count = 0;
  const Fiber* other = nullptr;
  for (Fiber& f : w->fibers) {
    if (f.state != WAIT_BLOCK) continue;
    bool elsewhere = f.line != first->line || (f.file != first->file && strcmp(f.file, first->file) != 0);
    if (elsewhere && f.mode == first->mode) {
      // Since Volta a block barrier is counted per thread and completes once every thread that
      // has not exited reached one, whichever call (vLLM's moe_align: a group of fill threads
      // meets the others at its own __syncthreads() and returns).
      if (!other) other = &f;
    } else if (elsewhere) {
      deadlock(
          "cudashim: deadlock in %s: threads wait at different __syncthreads() calls (%s for thread "
          "(%u,%u,%u), %s for thread (%u,%u,%u)); a barrier in divergent code",
          block_name(w).c_str(), where(*first).c_str(), first->tid.x, first->tid.y, first->tid.z,
          where(f).c_str(), f.tid.x, f.tid.y, f.tid.z);
    }
    count += (int)f.value;
  }
  if (other)
    portability("threads of a block in kernel '%s' meet at different __syncthreads() calls (%s, %s); the "
                "barrier completes, as on GPUs since Volta (the CUDA guide allows a barrier in conditional "
                "code only when the condition is the same across the block)",
                w->spec->name, where(*first).c_str(), where(*other).c_str());
  unsigned long long r = 0;
  switch (first->mode) {
    case 1: r = (unsigned long long)count; break;
    case 2: r = count == w->bar_arrived; break;
    case 3: r = count > 0; break;
    default: r = 0;
  }
  for (Fiber& f : w->fibers)
    if (f.state == WAIT_BLOCK) {
      f.state = RUNNABLE;
      f.result = r;
    }
  w->bar_arrived = 0;
  w->cursor = 0;
#ifdef CUDASHIM_RACE
  race::barrier_completes(w);
#endif
}

[[noreturn]] static void barrier_in_direct_mode(const char* what, const char* file, unsigned line) {
  fatal("cudashim: internal error: kernel '%s' was judged barrier-free but reached %s at %s:%u",
        tw->spec->name, what, file, line);
}

bool race_build() {
#ifdef CUDASHIM_RACE
  return true;
#else
  return false;
#endif
}

int block_barrier(int mode, int pred, unsigned line, const char* file) {
  Worker* w = tw;
  if (w && w->direct) barrier_in_direct_mode("__syncthreads()", file, line);
  if (!w || !w->cur) return mode == 1 ? pred : pred;  // host code: a no-op
  Fiber* f = w->cur;
  f->state = WAIT_BLOCK;
  f->line = line;
  f->file = file;
  f->mode = mode;
  f->value = (unsigned long long)pred;
  w->bar_arrived++;
  check_block_barrier(w);
  yield(w, f);
  return (int)f->result;
}

// ---------------------------------------------------------------- warp operations
static const char* warp_op_name(int kind) {
  switch (kind) {
    case _Wop_SYNC: return "__syncwarp";
    case _Wop_SHFL: return "__shfl_sync";
    case _Wop_SHFL_UP: return "__shfl_up_sync";
    case _Wop_SHFL_DOWN: return "__shfl_down_sync";
    case _Wop_SHFL_XOR: return "__shfl_xor_sync";
    case _Wop_BALLOT: return "__ballot_sync";
    case _Wop_ANY: return "__any_sync";
    case _Wop_ALL: return "__all_sync";
    case _Wop_MATCH_ANY: return "__match_any_sync";
    case _Wop_MATCH_ALL: return "__match_all_sync";
    case _Wop_COALESCE: return "__activemask()/coalesced_threads()";
    default: return "__reduce_*_sync";
  }
}

static unsigned warp_existing_lanes(Worker* w, int warp) {
  int n = std::min(32, w->nthreads - warp * 32);
  return n >= 32 ? 0xffffffffu : ((1u << n) - 1);
}

static bool same_warp_op(const Fiber& a, const Fiber& b) {
  return a.kind == b.kind && a.line == b.line && (a.file == b.file || strcmp(a.file, b.file) == 0);
}

static bool is_shuffle(int kind) {
  return kind == _Wop_SHFL || kind == _Wop_SHFL_UP || kind == _Wop_SHFL_DOWN || kind == _Wop_SHFL_XOR;
}

static int shuffle_width(const Fiber& f) {
  return (f.width <= 0 || f.width > 32 || (f.width & (f.width - 1))) ? 32 : f.width;
}

// Lanes at different shuffles, each lane's whole segment (`width` < 32) at the same one as itself:
// every lane reads only within its segment, so each segment's exchange is complete on its own.
// A warp split into half-warp rows that run different trip counts gets here (HeCBench's jaccard:
// width 16, full mask); GPUs since Volta complete each shuffle with the lanes that reached it.
static bool segments_apart(Worker* w, int warp, unsigned group) {
  const Fiber* lanes = &w->fibers[warp * 32];
  for (unsigned g = group; g; g &= g - 1) {
    int l = __builtin_ctz(g);
    const Fiber& f = lanes[l];
    int width = shuffle_width(f);
    if (!is_shuffle(f.kind) || width == 32) return false;
    unsigned segment = ((1u << width) - 1) << (l & ~(width - 1));
    for (unsigned m = segment & group; m; m &= m - 1)
      if (!same_warp_op(lanes[__builtin_ctz(m)], f)) return false;
  }
  return true;
}

static void complete_warp_group(Worker* w, int warp, unsigned group);

static void complete_warp_op(Worker* w, int warp, unsigned group) {
  Fiber* lanes = &w->fibers[warp * 32];
  int first = __builtin_ctz(group);
  const Fiber& f0 = lanes[first];
  for (unsigned g = group; g; g &= g - 1) {
    int l = __builtin_ctz(g);
    const Fiber& f = lanes[l];
    if (same_warp_op(f, f0)) continue;
    if (!segments_apart(w, warp, group)) {
      deadlock(
          "cudashim: deadlock in %s: lanes of warp %d meet at different warp operations (%s at %s for "
          "lane %d, %s at %s for lane %d)",
          block_name(w).c_str(), warp, warp_op_name(f0.kind), where(f0).c_str(), first, warp_op_name(f.kind),
          where(f).c_str(), l);
    }
    portability("lanes of a warp in kernel '%s' reach different shuffles (%s at %s, %s at %s), each "
                "lane's segment of width %d at the same one: each segment exchanges within itself, as on "
                "GPUs since Volta (the CUDA guide asks every lane of the mask to run the same intrinsic)",
                w->spec->name, warp_op_name(f0.kind), where(f0).c_str(), warp_op_name(f.kind), where(f).c_str(),
                shuffle_width(f0));
    for (unsigned rest = group; rest;) {
      const Fiber& head = lanes[__builtin_ctz(rest)];
      unsigned part = 0;
      for (unsigned m = rest; m; m &= m - 1)
        if (same_warp_op(lanes[__builtin_ctz(m)], head)) part |= 1u << __builtin_ctz(m);
      complete_warp_group(w, warp, part);
      rest &= ~part;
    }
    return;
  }
  complete_warp_group(w, warp, group);
}

// Every lane of `group` is at the same warp operation: compute each lane's result and wake it.
static void complete_warp_group(Worker* w, int warp, unsigned group) {
#ifdef CUDASHIM_RACE
  race::warp_op_completes(w, warp, group);
#endif
  Fiber* lanes = &w->fibers[warp * 32];
  int first = __builtin_ctz(group);
  const Fiber& f0 = lanes[first];
  unsigned long long ballot = 0;
  for (unsigned g = group; g; g &= g - 1) {
    int l = __builtin_ctz(g);
    if (lanes[l].value) ballot |= 1ull << l;
  }
  for (unsigned g = group; g; g &= g - 1) {
    int l = __builtin_ctz(g);
    Fiber& f = lanes[l];
    unsigned long long r = f.value;
    int width = shuffle_width(f);
    int base = l & ~(width - 1);
    int src = l;
    switch (f.kind) {
      case _Wop_SHFL: src = base + (f.param & (width - 1)); break;
      case _Wop_SHFL_UP: src = (l - base) >= f.param ? l - f.param : l; break;
      case _Wop_SHFL_DOWN: src = (l - base) + f.param < width ? l + f.param : l; break;
      case _Wop_SHFL_XOR: {
        int s = l ^ f.param;
        src = (s & ~(width - 1)) == base || width == 32 ? s & 31 : l;
        break;
      }
      default: break;
    }
    switch (f.kind) {
      case _Wop_SHFL:
      case _Wop_SHFL_UP:
      case _Wop_SHFL_DOWN:
      case _Wop_SHFL_XOR:
        if (src < 0 || src > 31 || !((group >> src) & 1)) {
          // Reading a lane that does not take part is undefined in CUDA. An exited lane has no
          // value to give: the reader keeps its own, and the run says so.
          bool exited = src >= 0 && src < 32 && src + warp * 32 < w->nthreads && lanes[src].state == DONE;
          if (exited)
            portability("%s at %s in kernel '%s' reads a lane that has exited (undefined in CUDA; the "
                        "reading lane kept its own value)",
                        warp_op_name(f.kind), where(f).c_str(), w->spec->name);
          r = (!exited && src >= 0 && src < 32 && src + warp * 32 < w->nthreads) ? lanes[src].value : f.value;
        } else {
          r = lanes[src].value;
        }
        break;
      case _Wop_BALLOT: r = ballot; break;
      case _Wop_ANY: r = ballot != 0; break;
      case _Wop_ALL: r = (ballot & group) == group; break;
      case _Wop_MATCH_ANY: {
        unsigned m = 0;
        for (unsigned g2 = group; g2; g2 &= g2 - 1)
          if (lanes[__builtin_ctz(g2)].value == f.value) m |= 1u << __builtin_ctz(g2);
        r = m;
        break;
      }
      case _Wop_MATCH_ALL: {
        bool all = true;
        for (unsigned g2 = group; g2; g2 &= g2 - 1) all &= lanes[__builtin_ctz(g2)].value == f0.value;
        r = all ? group : 0;
        break;
      }
      case _Wop_REDUCE_ADD: case _Wop_REDUCE_MIN: case _Wop_REDUCE_MAX: case _Wop_REDUCE_UMIN: case _Wop_REDUCE_UMAX:
      case _Wop_REDUCE_AND: case _Wop_REDUCE_OR: case _Wop_REDUCE_XOR: {
        long long acc = (long long)(int)lanes[first].value;
        unsigned long long uacc = (unsigned)lanes[first].value;
        for (unsigned g2 = group & (group - 1); g2; g2 &= g2 - 1) {
          long long v = (long long)(int)lanes[__builtin_ctz(g2)].value;
          unsigned long long u = (unsigned)lanes[__builtin_ctz(g2)].value;
          switch (f.kind) {
            case _Wop_REDUCE_ADD: acc += v; break;
            case _Wop_REDUCE_MIN: acc = std::min(acc, v); break;
            case _Wop_REDUCE_MAX: acc = std::max(acc, v); break;
            case _Wop_REDUCE_UMIN: uacc = std::min(uacc, u); break;
            case _Wop_REDUCE_UMAX: uacc = std::max(uacc, u); break;
            case _Wop_REDUCE_AND: uacc &= u; break;
            case _Wop_REDUCE_OR: uacc |= u; break;
            default: uacc ^= u; break;
          }
        }
        bool uns = f.kind == _Wop_REDUCE_UMIN || f.kind == _Wop_REDUCE_UMAX || f.kind == _Wop_REDUCE_AND ||
                   f.kind == _Wop_REDUCE_OR || f.kind == _Wop_REDUCE_XOR;
        r = uns ? uacc : (unsigned long long)(unsigned)(int)acc;
        break;
      }
      default: r = 0;
    }
    f.result = r;
    f.state = RUNNABLE;
    w->cursor = std::min(w->cursor, w->pos[f.lin]);
  }
  w->warp_arrived[warp] &= ~group;
}

unsigned long long warp_op(int kind, unsigned mask, unsigned long long value, int param, int width, unsigned line,
                           const char* file) {
  Worker* w = tw;
  if (w && w->direct) barrier_in_direct_mode(warp_op_name(kind), file, line);
  if (!w || !w->cur) {  // host code: a single lane
    if (kind == _Wop_BALLOT) return value ? 1 : 0;
    if (kind == _Wop_MATCH_ANY || kind == _Wop_MATCH_ALL || kind == _Wop_COALESCE) return 1;
    return value;
  }
  Fiber* f = w->cur;
  int warp = f->lin / 32, lane = f->lin % 32;
  unsigned group = (mask | (1u << lane)) & warp_existing_lanes(w, warp);
  if (unsigned gone = group & w->warp_done[warp]) {
    if (kind == _Wop_SYNC && param == 1)  // a whole-warp operation (WMMA): no lane may be missing
      deadlock(
          "cudashim: deadlock in %s: %s at %s:%u in thread (%u,%u,%u) needs the whole warp, but lane %d has "
          "exited",
          block_name(w).c_str(), warp_op_name(kind), file, line, f->tid.x, f->tid.y, f->tid.z,
          __builtin_ctz(gone));
    portability("%s at %s:%u in kernel '%s' names lanes in its mask that exited without reaching it "
                "(undefined in CUDA; GPUs since Volta do not wait for them)",
                warp_op_name(kind), file, line, w->spec->name);
    group &= ~w->warp_done[warp];
  }
  f->state = WAIT_WARP;
  f->kind = kind;
  f->mask = group;
  f->asked = mask;
  if (kind == _Wop_COALESCE) {  // resolved by the scheduler once the warp cannot move otherwise
    f->line = line;
    f->file = file;
    yield(w, f);
    return f->result;
  }
  f->value = value;
  f->param = param;
  f->width = width;
  f->line = line;
  f->file = file;
  w->warp_arrived[warp] |= 1u << lane;
  if ((w->warp_arrived[warp] & group) == group) {
    bool same = true;
    for (unsigned g = group; g; g &= g - 1) same &= w->fibers[warp * 32 + __builtin_ctz(g)].mask == group;
    if (same) complete_warp_op(w, warp, group);
  }
  yield(w, f);
  return f->result;
}

unsigned active_mask() {
  Worker* w = tw;
  if (w && w->direct) barrier_in_direct_mode("__activemask()", "?", 0);
  if (!w || !w->cur) return 1;
  int warp = w->cur->lin / 32;
  return warp_existing_lanes(w, warp) & ~w->warp_done[warp];
}

unsigned lane_id() {
  Worker* w = tw;
  if (w && w->direct) {
    if (w->spec->threads)  // the program's loop over threads sets only threadIdx
      return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32;
    return w->direct_lin % 32;
  }
  return (w && w->cur) ? (unsigned)(w->cur->lin % 32) : 0;
}

// ---------------------------------------------------------------- deadlock description
static void describe_and_die(Worker* w) {
  std::string msg = "cudashim: deadlock in " + block_name(w) + ": no thread can make progress;";
  int at_block = 0, at_warp = 0, at_grid = 0, at_sync = 0;
  const Fiber* fb = nullptr;
  const Fiber* fw = nullptr;
  const Fiber* fg = nullptr;
  const Fiber* fs = nullptr;
  for (const Fiber& f : w->fibers) {
    if (f.state == WAIT_SYNC) {
      at_sync++;
      if (!fs) fs = &f;
      // An object of device or system scope may be waiting for other blocks' arrivals, which
      // only co-resident blocks (a GPU, or a cooperative launch here) would bring.
      if (!f.sync_block) _Sync_needs_gpu(f.sync_what, f.file, f.line);
    } else if (f.state == WAIT_BLOCK) {
      at_block++;
      if (!fb) fb = &f;
    } else if (f.state == WAIT_WARP) {
      at_warp++;
      if (!fw) fw = &f;
    } else if (f.state == WAIT_GRID) {
      at_grid++;
      if (!fg) fg = &f;
    }
  }
  char b[512];
  if (at_grid) {
    snprintf(b, sizeof b, " %d threads wait at grid.sync() (first at %s);", at_grid, where(*fg).c_str());
    msg += b;
  }
  if (at_block) {
    snprintf(b, sizeof b, " %d threads wait at __syncthreads() (first at %s);", at_block, where(*fb).c_str());
    msg += b;
  }
  if (at_warp) {
    snprintf(b, sizeof b, " %d threads wait at %s (first at %s, thread (%u,%u,%u), mask 0x%08x);", at_warp,
             warp_op_name(fw->kind), where(*fw).c_str(), fw->tid.x, fw->tid.y, fw->tid.z, fw->mask);
    msg += b;
    // What CUDA requires of a *_sync mask, said where a waiting lane broke it: a hang of ours
    // would read the same, so the program's own cause is named when it has one.
    for (const Fiber& f : w->fibers) {
      if (f.state != WAIT_WARP || f.kind == _Wop_COALESCE) continue;
      int lane = f.lin % 32;
      if (!(f.asked & (1u << lane))) {
        snprintf(b, sizeof b, " lane %d of thread (%u,%u,%u) passed %s the mask 0x%08x, which leaves out its own "
                 "lane (CUDA: each calling thread must have its own bit set; undefined otherwise);", lane,
                 f.tid.x, f.tid.y, f.tid.z, warp_op_name(f.kind), f.asked);
        msg += b;
        break;
      }
    }
  }
  if (at_sync) {
    snprintf(b, sizeof b, " %d threads wait at %s (first at %s, thread (%u,%u,%u)) for arrivals or releases "
             "that no thread of the block will make;", at_sync, fs->sync_what, where(*fs).c_str(), fs->tid.x,
             fs->tid.y, fs->tid.z);
    msg += b;
  }
  snprintf(b, sizeof b, " %d threads exited", w->exited);
  msg += b;
  deadlock("%s", msg.c_str());
}

// ---------------------------------------------------------------- running a block
static void make_order(Worker* w, int n) {
  w->order.resize(n);
  w->pos.resize(n);
  const Config& c = config();
  for (int i = 0; i < n; ++i) w->order[i] = c.order == Order::Reverse ? n - 1 - i : i;
  if (c.order == Order::Random) {
    w->rng.seed(c.seed * 0x9E3779B97F4A7C15ull + w->block_lin * 0xBF58476D1CE4E5B9ull + 1);
    for (int i = n - 1; i > 0; --i) std::swap(w->order[i], w->order[w->rng() % (unsigned)(i + 1)]);
  }
  for (int i = 0; i < n; ++i) w->pos[w->order[i]] = i;
}

// coalesced_threads(): the lanes of a warp that reach the same call while every other live lane
// of the warp is blocked elsewhere or has exited (the lanes a GPU would have converged there).
struct DirectAbort {};
static void coop_park(Worker* w);

static bool resolve_coalesced(Worker* w) {
  bool any = false;
  for (size_t warp = 0; warp < w->warp_arrived.size(); ++warp) {
    Fiber* lanes = &w->fibers[warp * 32];
    unsigned ex = warp_existing_lanes(w, (int)warp);
    const Fiber* first = nullptr;
    for (unsigned g = ex; g; g &= g - 1) {
      const Fiber& f = lanes[__builtin_ctz(g)];
      if (f.state == WAIT_WARP && f.kind == _Wop_COALESCE) {
        first = &f;
        break;
      }
    }
    if (!first) continue;
    unsigned group = 0;
    for (unsigned g = ex; g; g &= g - 1) {
      const Fiber& f = lanes[__builtin_ctz(g)];
      if (f.state == WAIT_WARP && f.kind == _Wop_COALESCE && f.line == first->line && f.file == first->file)
        group |= 1u << __builtin_ctz(g);
    }
    for (unsigned g = group; g; g &= g - 1) {
      Fiber& f = lanes[__builtin_ctz(g)];
      f.result = group;
      f.state = RUNNABLE;
      w->cursor = std::min(w->cursor, w->pos[f.lin]);
    }
    w->warp_arrived[warp] &= ~group;
    any = true;
  }
  return any;
}

// ---------------------------------------------------------------- poisoned memory
// CUDASHIM_POISON=<byte>: device allocations and shared memory (static, per block, and dynamic)
// start filled with this byte instead of whatever the host allocator left (often zeros, which
// hides reads of uninitialised memory). The engine runs its two checking variants with two
// different bytes: outputs that change with the byte read memory nobody wrote. To name the
// buffer, CUDASHIM_POISON_ONLY=<k> gives buffer k (numbered in order of first use, listed in
// CUDASHIM_POISON_LOG) CUDASHIM_POISON_ALT instead.
static int env_byte(const char* name) {
  const char* v = shim_env(name);
  if (!v || !*v) return -1;
  return (int)(strtol(v, nullptr, 0) & 0xff);
}
static int poison_byte() { static const int b = env_byte("CUDASHIM_POISON"); return b; }
static int poison_only() {
  static const int k = [] { const char* v = shim_env("CUDASHIM_POISON_ONLY"); return v && *v ? atoi(v) : -1; }();
  return k;
}
static std::mutex g_poison_mutex;
static std::vector<std::string>& poison_names() { static std::vector<std::string> v; return v; }

// The buffer's number (assigned, and logged, on first use of its description).
static int poison_id(const std::string& desc) {
  std::lock_guard<std::mutex> lk(g_poison_mutex);
  auto& names = poison_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == desc) return (int)i;
  names.push_back(desc);
  static const char* path = shim_env("CUDASHIM_POISON_LOG");
  std::string line = std::to_string(names.size() - 1) + "\t" + desc + "\n";
  shim_log(path, line.data(), line.size());
  return (int)names.size() - 1;
}
static int poison_for(int id) {
  static const int alt = env_byte("CUDASHIM_POISON_ALT");
  return (id == poison_only() && alt >= 0) ? alt : poison_byte();
}
static void poison_fill(void* p, size_t n, const std::string& desc) {
  if (poison_byte() < 0 || !p || n == 0) return;
  memset(p, poison_for(poison_id(desc)), n);
}

unsigned long long block_serial();
// Called (by the rewritten source) where a kernel declares a static __shared__ variable: the
// first thread of each block to get there fills it, once per block.
// Where this worker's static __shared__ variables live (the first ones seen; no allocation, so
// the fault handler may read them): a fault far past one of them is named (shared_wrap_hint).
struct SharedSeen {
  uintptr_t p;
  size_t n;
};
static thread_local SharedSeen t_shared_seen[16];
static thread_local int t_shared_seen_n = 0;

void shared_decl(void* p, size_t n, const char* name, unsigned line) {
  {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    bool known = false;
    for (int i = 0; i < t_shared_seen_n && !known; ++i) known = t_shared_seen[i].p == a;
    if (!known && t_shared_seen_n < 16) t_shared_seen[t_shared_seen_n++] = SharedSeen{a, n};
  }
#ifdef CUDASHIM_RACE
  race::note_shared(p, n, name, line);
#endif
#ifdef CUDASHIM_ASAN
  if (Worker* w = tw; w && w->cur) {
    bool known = false;
    for (const auto& v : w->block_shared) known |= v.first == p;
    if (!known) w->block_shared.emplace_back(p, n);
  }
#endif
  if (poison_byte() < 0) return;
  struct Seen { void* p; unsigned long long serial; };
  static thread_local std::vector<Seen> seen;
  const unsigned long long serial = block_serial();
  for (Seen& e : seen) {
    if (e.p != p) continue;
    if (e.serial == serial) return;
    e.serial = serial;
    goto fill;
  }
  seen.push_back(Seen{p, serial});
fill:
  poison_fill(p, n, std::string("__shared__ ") + name + " (line " + std::to_string(line) + ", kernel " +
                        (t_kernel ? t_kernel : "?") + ")");
}

static void block_waits_outside(Worker* w);
static void block_shared_save(Worker* w);
static void block_shared_restore(Worker* w);

static void run_block(Worker* w, const LaunchSpec& s, unsigned long long lin) {
  const unsigned gx = s.grid.x, gy = s.grid.y;
  blockIdx = uint3{(unsigned)(lin % gx), (unsigned)((lin / gx) % gy), (unsigned)(lin / ((unsigned long long)gx * gy))};
  w->block_lin = lin;
#ifdef CUDASHIM_ASAN
  w->block_shared.clear();
#endif
  static std::atomic<unsigned long long> serials{0};
  w->block_serial = ++serials;
  if (s.shmem && poison_byte() >= 0)
    poison_fill(w->smem, s.shmem, std::string("dynamic shared memory (kernel ") + s.name + ")");
  const int n = w->nthreads;
  for (int i = 0; i < n; ++i) {
    Fiber& f = w->fibers[i];
    f.state = NEW;
    f.spins = 0;
  }
  w->yielded = 0;
  w->sync_waiting = 0;
  std::fill(w->warp_arrived.begin(), w->warp_arrived.end(), 0u);
  std::fill(w->warp_done.begin(), w->warp_done.end(), 0u);
  w->live = n;
  w->exited = 0;
  w->bar_arrived = 0;
  w->grid_waiting = 0;
  make_order(w, n);
#ifdef CUDASHIM_RACE
  race::block_begins(w, n);
#endif
  if (!s.may_sync) {
    // No barrier can be reached: each thread runs start to finish on the worker's own stack.
    w->direct = true;
    if (s.lockstep && config().lockstep && config().order != Order::Random) {
      try {
        s.lockstep(s.lockstep_arg, config().order == Order::Reverse ? -1 : 1, &g_abort_launch);
      } catch (const DirectAbort&) {
      }
      w->direct = false;
      w->live = 0;
      return;
    }
    if (s.threads) {
      try {
        s.threads(s.arg, config().order == Order::Forward ? nullptr : w->order.data(), w->tids.data(), n,
                  &g_abort_launch);
      } catch (const DirectAbort&) {
      }
      w->direct = false;
      w->live = 0;
      return;
    }
    for (int idx : w->order) {
      if (g_abort_launch.load(std::memory_order_relaxed)) break;
      Fiber& f = w->fibers[idx];
      threadIdx = f.tid;
      w->direct_lin = (unsigned)idx;
      try {
        s.body(s.arg);
      } catch (const DirectAbort&) {
        break;
      }
    }
    w->direct = false;
    w->live = 0;
    return;
  }
  // Always run the earliest runnable thread in schedule order: threads released by a barrier
  // go before threads that have not reached it yet (depth first), which is what exposes a
  // missing __syncthreads between two phases separated only by warp-level synchronisation.
  w->cursor = 0;
  // Spin points hand the turn on only where there is a fiber to hand it to (a cooperative block
  // run directly still hands its turn to the other blocks: coop_thread sets the flag).
  const bool spin_was = _Spin_fibers;
  _Spin_fibers = true;
  struct Restore { bool v; ~Restore() { _Spin_fibers = v; } } restore{spin_was};
  while (w->live > 0) {
    Fiber* f = nullptr;
    while (w->cursor < n) {
      Fiber* c = &w->fibers[w->order[w->cursor]];
      if (c->state == NEW || c->state == RUNNABLE) {
        f = c;
        break;
      }
      w->cursor++;
    }
    if (g_abort_launch.load(std::memory_order_relaxed)) break;
    if (!f) {
      if (resolve_coalesced(w)) continue;
      if (w->yielded > 0) {
        // Every thread that spun has let the others run as far as they could: its turn again.
        if (!w->coop && w->job) block_waits_outside(w);
        for (int i = 0; i < n; ++i)
          if (w->fibers[i].state == YIELDED) w->fibers[i].state = RUNNABLE;
        w->yielded = 0;
        w->cursor = 0;
        continue;
      }
      if (w->coop && w->grid_waiting > 0 && w->grid_waiting == w->live) {
        coop_park(w);  // back when every thread of the grid has arrived
#ifdef CUDASHIM_RACE
        race::grid_sync_released(w);
#endif
        for (int i = 0; i < n; ++i)
          if (w->fibers[i].state == WAIT_GRID) w->fibers[i].state = RUNNABLE;
        w->grid_waiting = 0;
        w->cursor = 0;
        continue;
      }
      describe_and_die(w);
    }
    if (f->state == NEW)
      start_fiber(w, f);
    else
      resume_fiber(w, f);
  }
}

static void prepare_worker(Worker* w, const LaunchSpec& s) {
  w->spec = &s;
  const int n = (int)(s.block.x * s.block.y * s.block.z);
  w->nthreads = n;
  if ((int)w->fibers.size() < n) w->fibers.resize(n);
  for (int i = 0; i < n; ++i) {
    Fiber& f = w->fibers[i];
    f.lin = i;
    f.tid = uint3{i % s.block.x, (i / s.block.x) % s.block.y, i / (s.block.x * s.block.y)};
  }
  if (!s.may_sync && s.threads) {
    w->tids.resize(n);
    for (int i = 0; i < n; ++i) w->tids[i] = w->fibers[i].tid;
  }
  w->warp_arrived.assign((n + 31) / 32, 0u);
  w->warp_done.assign((n + 31) / 32, 0u);
  blockDim = s.block;
  gridDim = s.grid;
  t_kernel = s.name;
#ifdef CUDASHIM_ASAN
  // Exactly the requested size, so AddressSanitizer sees overruns of dynamic shared memory.
  w->smem = malloc(s.shmem ? s.shmem : 1);
  w->smem_cap = s.shmem;
#else
  size_t want = std::max<size_t>(s.shmem, 64 * 1024);
  if (w->smem_cap < want) {
    free(w->smem);
    w->smem = aligned_alloc(256, (want + 255) & ~size_t(255));
    w->smem_cap = want;
  }
#endif
}

static void finish_worker(Worker* w) {
#ifdef CUDASHIM_ASAN
  free(w->smem);
  w->smem = nullptr;
  w->smem_cap = 0;
#endif
  w->spec = nullptr;
  t_kernel = nullptr;
  threadIdx = uint3{0, 0, 0};
  blockIdx = uint3{0, 0, 0};
}

}  // namespace cudashim

// In device code clock() is the SM cycle counter (clock64's, truncated to clock_t as on a GPU it
// is read into one); libc's would count the process's CPU time in microseconds, so a kernel
// spinning `clockRate * ms` cycles (cuda-samples' simpleHyperQ, clock_block) spun 1000 times
// longer. Host code keeps libc's meaning: CPU time of the process, CLOCKS_PER_SEC per second.
extern "C" clock_t clock(void) noexcept {
  if (cudashim::t_kernel) return (clock_t)clock64();
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return (clock_t)-1;
  return (clock_t)(ts.tv_sec * 1000000LL + ts.tv_nsec / 1000);
}

namespace cudashim {

// Tells per-thread state kept by headers (async copies: include/cuda_pipeline_primitives.h)
// from one block run to the next; 0 outside kernels.
unsigned long long block_serial() {
  Worker* w = tw;
  return w && w->spec ? w->block_serial : 0;
}

void* dyn_smem() {
  Worker* w = tw;
  return w ? w->smem : nullptr;
}

// ---------------------------------------------------------------- the worker pool
// One launch: its blocks are taken in schedule order by the launching thread and by the pool's
// helpers that join it. Several host threads (OpenMP, std::thread) may launch at once: each
// posts its own Job, shares the helpers with the others, and always works through its own
// blocks itself, so no launch ever waits for another one (helpers only speed it up).
struct Job {
  const LaunchSpec* spec = nullptr;
  unsigned long long nblocks = 0;
  const std::vector<unsigned long long>* perm = nullptr;
  std::atomic<unsigned long long> next{0};  // grids of 2^31 blocks or more: the next position
  // Smaller grids: positions taken from the front (low 32 bits) and from the back (high 32 bits)
  // of the schedule's order; from the back once `low` is set (block_waits_outside).
  std::atomic<unsigned long long> ends{0};
  std::atomic<bool> low{false};
  // `random:` orders (perm): blocks taken in the permutation's order, or lowest index first
  // once `low` is set; under `pm`.
  std::mutex pm;
  std::vector<unsigned char> started;
  unsigned long long front = 0, lowest = 0, taken = 0;
  int wanted = 0;  // helpers the launch can use (blocks - 1, at most workers - 1)
  int joined = 0;  // helpers working on it now (under Pool::m)
  int resident = 1;  // blocks of the launch the emulated device holds at once (grid residency)
  bool posted = false;  // in Pool::jobs (under Pool::m)
#if defined(CUDASHIM_ASAN) || defined(CUDASHIM_RACE)
  // These builds run one block at a time; once a block waits for others, the launch's blocks
  // run by turns on threads of their own (block_waits_outside). Under `tm`, once `turns` is set:
  bool turns = false;
  std::mutex tm;
  std::condition_variable tcv;  // helpers waiting to start the next block (kNewBlock)
  Worker* holder = nullptr;  // the worker whose block may run (kNewBlock: the next block to start)
  std::deque<Worker*> ring;  // workers whose blocks wait for the turn, in the order they gave it up
#endif
};

struct Pool {
  std::mutex m;
  std::condition_variable cv, done_cv;
  std::vector<std::thread> threads;
  std::vector<Job*> jobs;  // launches still open to helpers, oldest first
  int idle = 0;            // helpers waiting for a launch
};

static Pool& pool() {
  static Pool* p = new Pool();
  return *p;
}

static inline unsigned long long block_at(unsigned long long k, unsigned long long nb,
                                          const std::vector<unsigned long long>* perm) {
  if (perm) return (*perm)[k];
  return config().order == Order::Reverse ? nb - 1 - k : k;
}

static constexpr unsigned long long kPacked = 1ull << 31;

// A `random:` launch's next block: the permutation's next one not started, or once `low` is set
// the lowest one not started.
static bool take_permuted(Job& j, unsigned long long& b) {
  const std::vector<unsigned long long>& perm = *j.perm;
  std::lock_guard<std::mutex> lk(j.pm);
  if (j.started.empty()) j.started.assign(j.nblocks, 0);
  if (j.low.load(std::memory_order_relaxed)) {
    while (j.lowest < j.nblocks && j.started[j.lowest]) ++j.lowest;
    if (j.lowest >= j.nblocks) return false;
    b = j.lowest;
  } else {
    while (j.front < j.nblocks && j.started[perm[j.front]]) ++j.front;
    if (j.front >= j.nblocks) return false;
    b = perm[j.front++];
  }
  j.started[b] = 1;
  j.taken++;
  return true;
}

// The next block of the launch to run, in the schedule's order, if any is left.
static bool take(Job& j, unsigned long long& b) {
  if (j.perm) return take_permuted(j, b);
  unsigned long long k;
  if (j.nblocks >= kPacked) {
    if ((k = j.next.fetch_add(1)) >= j.nblocks) return false;
    b = block_at(k, j.nblocks, nullptr);
    return true;
  }
  const bool low = j.low.load(std::memory_order_relaxed);
  unsigned long long e = j.ends.load(std::memory_order_relaxed);
  for (;;) {
    const unsigned long long front = e & 0xffffffffull, back = e >> 32;
    if (front + back >= j.nblocks) return false;
    if (j.ends.compare_exchange_weak(e, low ? e + (1ull << 32) : e + 1, std::memory_order_relaxed)) {
      k = low ? j.nblocks - 1 - back : front;
      b = block_at(k, j.nblocks, nullptr);
      return true;
    }
  }
}

// Blocks of the launch not started yet.
static unsigned long long unstarted(Job& j) {
  if (j.perm) {
    std::lock_guard<std::mutex> lk(j.pm);
    return j.nblocks - j.taken;
  }
  if (j.nblocks >= kPacked) return j.nblocks - std::min(j.nblocks, j.next.load(std::memory_order_relaxed));
  const unsigned long long e = j.ends.load(std::memory_order_relaxed);
  return j.nblocks - std::min(j.nblocks, (e & 0xffffffffull) + (e >> 32));
}

#if defined(CUDASHIM_ASAN) || defined(CUDASHIM_RACE)
static Worker* const kNewBlock = reinterpret_cast<Worker*>(uintptr_t(1));

// The turn passes to `next` (under j.tm).
static void hand_turn(Job& j, Worker* next) {
  j.holder = next;
  if (next == kNewBlock) j.tcv.notify_all();
  else if (next) next->turn_cv.notify_one();
}

// A helper starts the block the turn's holder asked for; whoever holds the turn takes blocks,
// so which block each worker runs is the schedule's alone.
static void turn_claim_new(Worker* w, Job& j) {
  std::unique_lock<std::mutex> lk(j.tm);
  j.tcv.wait(lk, [&] { return j.holder == kNewBlock; });
  j.holder = w;
}

// The worker's blocks are done: the block that gave the turn up first gets it.
static void turn_leave(Worker* w, Job& j) {
  if (!j.turns) return;  // set only by the worker holding the turn, and before any helper joins
  std::lock_guard<std::mutex> lk(j.tm);
  if (j.holder != w) return;
  Worker* next = nullptr;
  if (!j.ring.empty()) {
    next = j.ring.front();
    j.ring.pop_front();
  }
  hand_turn(j, next);
}
#endif

static void drain(Worker* w, Job& j, bool helper) {
  unsigned long long b;
  w->job = &j;
#if defined(CUDASHIM_ASAN) || defined(CUDASHIM_RACE)
  if (helper) turn_claim_new(w, j);
#else
  (void)helper;
#endif
  while (take(j, b)) {
    if (g_abort_launch.load(std::memory_order_relaxed)) break;
    w->stuck = 0;
    w->round_began = std::chrono::steady_clock::now();
    run_block(w, *j.spec, b);
  }
#if defined(CUDASHIM_ASAN) || defined(CUDASHIM_RACE)
  turn_leave(w, j);
#endif
  w->job = nullptr;
}

static Job* open_job(Pool& p) {
  for (Job* j : p.jobs)
    if (j->joined < j->wanted && unstarted(*j) > 0) return j;
  return nullptr;
}

static void worker_loop() {
  Pool& p = pool();
  Worker* w = worker();
  for (;;) {
    std::unique_lock<std::mutex> lk(p.m);
    Job* j = nullptr;
    p.cv.wait(lk, [&] { return (j = open_job(p)) != nullptr; });
    p.idle--;
    j->joined++;
    lk.unlock();
    prepare_worker(w, *j->spec);
    drain(w, *j, true);
    finish_worker(w);
    lk.lock();
    p.idle++;
    if (--j->joined == 0) p.done_cv.notify_all();
  }
}

// Grows the pool towards `helpers` threads; a thread the process may not create (the sandbox
// caps threads per run, and OpenMP's count too) only means fewer helpers.
static void grow_pool(Pool& p, int helpers) {
  while ((int)p.threads.size() < helpers) {
    try {
      p.threads.emplace_back(worker_loop);
    } catch (const std::system_error&) {
      return;
    }
    p.idle++;  // counted from its start, so a launch waiting for it does not start another
  }
}

static void run_blocks(const LaunchSpec& s, unsigned long long nb, int workers,
                       const std::vector<unsigned long long>* perm) {
  Worker* me = worker();
  Job j;
  j.spec = &s;
  j.nblocks = nb;
  j.perm = perm;
  j.wanted = (int)std::min<unsigned long long>((unsigned long long)workers, nb) - 1;
  j.resident = std::max(1, kEmulatedSMs * max_blocks_per_sm((long long)s.block.x * s.block.y * s.block.z, s.shmem));
  Pool& p = pool();
  if (j.wanted > 0) {
    std::lock_guard<std::mutex> lk(p.m);
    grow_pool(p, j.wanted);
    p.jobs.push_back(&j);
    j.posted = true;
    p.cv.notify_all();
  }
  prepare_worker(me, s);
  drain(me, j, false);
  finish_worker(me);
  // Only this thread posts a job not yet posted (helpers join posted ones): a launch that never
  // posted takes no lock here.
  if (j.posted) {
    std::unique_lock<std::mutex> lk(p.m);
    p.jobs.erase(std::find(p.jobs.begin(), p.jobs.end(), &j));
    p.done_cv.wait(lk, [&] { return j.joined == 0; });
  }
}

// Every live thread of a block of a normal launch spins (or waits at a barrier behind one that
// does): the block waits for something outside it, on a GPU most often another block of the
// grid (ECL's graph codes wait for vertices other blocks own; single-pass scans for the tiles
// before theirs). A GPU runs the grid's blocks side by side up to what its SMs hold, so such a
// block does not stop the others: here a block that waits while blocks of its launch have not
// started has another block started beside it, up to the emulated device's residency (the
// occupancy the program was told: multiProcessorCount x max blocks per SM). Beyond that
// residency a wait for a block not yet started spins until the time limit, as it can hang on a
// GPU.
//
// Under `reverse` or `random:<seed>`, a full device whose blocks wait takes the rest of the
// launch lowest block first, with room for as many more blocks: a GPU dispatches a grid's blocks
// in index order, so the blocks waited for (a scan's earlier tiles) would have run first.
static int residency_room(Job& j, unsigned long long live) {
  if (live >= (unsigned long long)j.resident && config().order != Order::Forward && j.nblocks < kPacked) {
    j.low.store(true, std::memory_order_relaxed);
    return 2 * j.resident;
  }
  return j.resident;
}

// A block that has waited long (2^20 passes) sleeps between rounds as long as its last round
// took, times the blocks spinning beside it: a grid that hangs (as it would on a GPU) then keeps
// less than one core busy, and reaches the run's wall-clock limit (a timeout) before its CPU
// limit (a round of 1024 threads in the race build takes tens of milliseconds: a fixed 100 us
// nap let such a hang reach the CPU limit first).
static void pause_waiting(Worker* w, int beside) {
  using namespace std::chrono;
  if (w->stuck >= (1ull << 20)) {
    const auto round = (steady_clock::now() - w->round_began) * std::max(1, beside);
    std::this_thread::sleep_for(std::clamp<steady_clock::duration>(round, microseconds(100), milliseconds(200)));
  } else {
    std::this_thread::yield();
  }
  w->round_began = steady_clock::now();
}

#if defined(CUDASHIM_ASAN) || defined(CUDASHIM_RACE)
// A helper to start the launch's next block: false when the sandbox allows no more threads.
static bool helper_for_next_block(Job& j) {
  Pool& p = pool();
  std::lock_guard<std::mutex> lk(p.m);
  if (p.idle == 0) grow_pool(p, (int)p.threads.size() + 1);
  if (p.idle == 0) return false;
  j.wanted = j.joined + 1;
  if (!j.posted) {
    p.jobs.push_back(&j);
    j.posted = true;
  }
  p.cv.notify_all();
  return true;
}

// These builds keep one copy of what a block owns (the ASan build's __shared__ is a plain
// static, the race detector's records are the process's), so they run one block at a time. A
// block that waits for other blocks hands the turn on: to a block not started yet (on a helper
// thread, up to the residency) or else to the block that has waited longest, and waits for the
// turn to come back, its __shared__ saved meanwhile, as the blocks of a cooperative launch do.
// Only one block runs at any moment, and every hand-over happens where a block waits, so a
// run's interleaving is a function of the schedule alone.
static void block_waits_outside(Worker* w) {
  Job& j = *w->job;
  w->stuck += 64ull * (unsigned long long)w->yielded;  // kSpinsPerYield passes per spinning thread
  const bool waiting = unstarted(j) > 0;
  pause_waiting(w, 1);  // one block runs at a time
  std::unique_lock<std::mutex> lk(j.tm);
  if (!j.turns) {
    if (!waiting) return;  // the only block left: nothing else can run
    j.turns = true;
    j.holder = w;
  }
  Worker* next = nullptr;
  if (waiting && (unsigned long long)j.ring.size() + 1 < (unsigned long long)residency_room(j, j.ring.size() + 1) &&
      helper_for_next_block(j)) {
    next = kNewBlock;
  } else if (!j.ring.empty()) {
    next = j.ring.front();
    j.ring.pop_front();
  } else {
    return;
  }
#ifdef CUDASHIM_RACE
  race::turn_ends(w);
#endif
  block_shared_save(w);
  j.ring.push_back(w);
  hand_turn(j, next);
  w->turn_cv.wait(lk, [&] { return j.holder == w; });
  lk.unlock();
  block_shared_restore(w);
  w->round_began = std::chrono::steady_clock::now();  // the others' turns were not its round
}
#else
// The plain build runs blocks side by side: another helper takes the launch's next block.
static void block_waits_outside(Worker* w) {
  Job& j = *w->job;
  w->stuck += 64ull * (unsigned long long)w->yielded;  // kSpinsPerYield passes per spinning thread
  if (unstarted(j) > 0) {
    Pool& p = pool();
    std::lock_guard<std::mutex> lk(p.m);
    const int room = residency_room(j, (unsigned long long)j.joined + 1);
    if (j.joined + 1 < room && j.wanted <= j.joined) {
      j.wanted = j.joined + 1;
      if (!j.posted) {
        p.jobs.push_back(&j);
        j.posted = true;
      }
      if (p.idle == 0) grow_pool(p, (int)p.threads.size() + 1);
      p.cv.notify_all();
    }
  }
  int beside = 1;  // the launch's other workers may spin too
  if (w->stuck >= (1ull << 20)) {
    std::lock_guard<std::mutex> lk(pool().m);
    beside = j.joined + 1;
  }
  pause_waiting(w, beside);
}
#endif

// ---------------------------------------------------------------- cooperative launches
// Every block of a cooperative grid is co-resident: each gets its own thread (so its
// thread_local __shared__ and its fibers stay alive across grid.sync()), but only one block
// runs at a time, handed the turn by the launching thread in schedule order. A block runs
// until all its live threads wait at grid.sync() (it parks) or all have exited; once every
// block has had its turn, either every thread of the grid waits (all are released, the next
// round starts) or some have exited (a deadlock report, as for __syncthreads). Running one
// block at a time keeps the outcome a function of the schedule alone.
struct Coop {
  enum : int { IDLE, RUNNING, PARKED, DONE, YIELDED };
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::thread> threads;
  const LaunchSpec* job = nullptr;
  unsigned long long nb = 0;
  unsigned long long gen = 0;
  long long turn = -1;  // the block allowed to run
  std::vector<int> st;
  std::vector<int> arrived;  // threads waiting at grid.sync() in each parked block
  std::vector<const Fiber*> at;
};

static Coop& coop() {
  static Coop* c = new Coop();
  return *c;
}

bool grid_is_valid() { return tw && tw->coop; }

void grid_sync(unsigned line, const char* file) {
  Worker* w = tw;
  if (w && w->direct) barrier_in_direct_mode("grid.sync()", file, line);
  if (!w || !w->cur) fatal("cudashim: grid.sync() at %s:%u called from host code", file, line);
  if (!w->coop)
    fatal("cudashim: grid.sync() at %s:%u in kernel '%s', which was not launched with "
          "cudaLaunchCooperativeKernel (grid synchronisation is undefined in a normal launch)",
          file, line, w->spec->name);
  Fiber* f = w->cur;
  f->state = WAIT_GRID;
  f->line = line;
  f->file = file;
  w->grid_waiting++;
  yield(w, f);
}

// A block gives its turn back from inside a spin loop and waits for it again.
static void coop_yield(Worker* w) {
  Coop& c = coop();
  const unsigned long long b = w->block_lin;
  std::unique_lock<std::mutex> lk(c.m);
  block_shared_save(w);
  c.st[b] = Coop::YIELDED;
  c.turn = -1;
  c.cv.notify_all();
  c.cv.wait(lk, [&] { return c.turn == (long long)b; });
  block_shared_restore(w);
  w->spins = 0;
}

// The rewrite calls this in every loop of device code whose exit waits on a volatile or atomic
// location (rewrite.py `_spin_point_edits`): a loop that may wait for another thread. Threads of
// a block run at once on a GPU (since Volta each is scheduled on its own), so a thread spinning
// on a flag a later thread of its block sets must let that thread run: after kSpinsPerYield
// passes it hands its turn to the block's other threads, as a barrier does, and runs again once
// none of them can. Blocks of a cooperative grid are co-resident, so likewise after
// kSpinsPerTurn passes in a block the block hands its turn to the next one. Counting passes (not
// time) keeps the interleaving a function of the schedule alone. A spin nobody can satisfy goes
// on until the run's time limit, as it would hang on a GPU.
static const unsigned kSpinsPerYield = 64;
static const unsigned kSpinsPerTurn = 4096;

thread_local bool _Spin_fibers = false;

void _Spin_point_slow() {
  Worker* w = tw;
  if (!w || (!w->cur && !w->direct)) return;  // host code
  if (g_abort_launch.load(std::memory_order_relaxed)) {
    // A device assert ended the launch: a thread spinning on a flag nobody will set stops here.
    if (w->direct) throw DirectAbort{};
    if (w->cur) {
      exit_fiber(w, w->cur);
      __builtin_unreachable();
    }
    return;
  }
  if (Fiber* f = w->cur; f && ++f->spins >= kSpinsPerYield) {
    f->spins = 0;
    f->state = YIELDED;
    w->yielded++;
    yield(w, f);
  }
  if (!w->coop || ++w->spins < kSpinsPerTurn) return;
  w->spins = 0;
  coop_yield(w);
}

// Where a libcu++ synchronisation object is used from: 0 host code (host threads share objects
// freely), 1 a CUDA thread of a normal launch, 2 of a cooperative one.
int _Sync_context() {
  Worker* w = tw;
  if (!w || !(w->cur || w->direct)) return 0;
  return w->coop ? 2 : 1;
}

// Synchronisation across the blocks of a normal launch is found two ways: a block waits for
// arrivals only other blocks would make (describe_and_die), or a second block uses the object
// while the first still does (_Sync_owner::_Claim). Which one a run meets first is the workers'
// timing, so both report it in the same words: the object (an operation's name is cut to the
// object it belongs to) and the line, never the block, so a run's reason does not depend on it.
[[noreturn]] void _Sync_needs_gpu(const char* what, const char* file, unsigned line) {
  std::string object = what;
  const auto cut = object.rfind("::");
  if (cut != std::string::npos && cut > 0) {
    const auto before = object.rfind("::", cut - 1);
    const std::string owner = object.substr(before == std::string::npos ? 0 : before + 2,
                                            cut - (before == std::string::npos ? 0 : before + 2));
    for (const char* o : {"barrier", "latch", "counting_semaphore", "binary_semaphore", "pipeline"})
      if (owner == o) {
        object.resize(cut);
        break;
      }
  }
  fatal("cudashim: needs a GPU: %s at %s:%u synchronises blocks of a launch that are not "
        "co-resident (libcu++ synchronisation across blocks needs co-resident blocks: a GPU, or an "
        "object of device or system scope in a cudaLaunchCooperativeKernel launch)",
        object.c_str(), file, line);
}

// libcu++'s barriers, latches and semaphores (include/cudashim/libcuxx_sync.h) wait here until
// `ready(arg)`. `kind` 0 (block scope): the waiter leaves the block's other threads to run until
// one of them changes the object (_Sync_notify wakes its waiters); when no thread of the block
// can run, that is a deadlock (describe_and_die), as at __syncthreads. 1 (a barrier or latch of
// wider scope): other blocks may complete it, which needs them co-resident: in a cooperative
// launch the waiter spins with the spin points' hand-over (to the block's threads, then to the
// other blocks); in a normal launch it waits as kind 0, and a block that cannot go on is
// reported as needing a GPU. 2 (a semaphore of wider scope): its holder is a thread of this
// block or of a block already running on another worker, so the waiter spins with the hand-over;
// a semaphore nobody releases hangs until the time limit, as on a GPU. Host threads just poll.
void _Sync_wait(bool (*ready)(const void*), const void* arg, const void* obj, int kind, const char* what,
                unsigned line, const char* file) {
  Worker* w = tw;
  if (w && w->direct) barrier_in_direct_mode(what, file, line);
  if (!w || !w->cur) {
    while (!ready(arg)) std::this_thread::yield();
    return;
  }
  Fiber* f = w->cur;
  while (!ready(arg)) {
    if (g_abort_launch.load(std::memory_order_relaxed)) {
      exit_fiber(w, f);  // a device assert ended the launch: nobody will complete the wait
      __builtin_unreachable();
    }
    if (kind == 2 || (kind == 1 && w->coop)) {
      _Spin_point_slow();
      continue;
    }
    f->state = WAIT_SYNC;
    f->sync_obj = obj;
    f->sync_what = what;
    f->sync_block = kind == 0;
    f->line = line;
    f->file = file;
    w->sync_waiting++;
    yield(w, f);
  }
}

// The object changed in a way that may end waits on it: its waiters in this block check again.
void _Sync_notify(const void* obj) {
  Worker* w = tw;
  if (!w || !w->cur || w->sync_waiting == 0) return;
  for (int i = 0; i < w->nthreads; ++i) {
    Fiber& f = w->fibers[i];
    if (f.state == WAIT_SYNC && f.sync_obj == obj) {
      f.state = RUNNABLE;
      w->sync_waiting--;
    }
  }
  w->cursor = 0;
}

// The ASan build's __shared__ is one static for all blocks: a cooperative block keeps its own
// values across the turns of the others (grid.sync(), a spin's hand-over) as a GPU block keeps its
// shared memory.
static void block_shared_save(Worker* w) {
#ifdef CUDASHIM_ASAN
  size_t total = 0;
  for (const auto& v : w->block_shared) total += v.second;
  w->block_saved.resize(total);
  size_t at = 0;
  for (const auto& v : w->block_shared) {
    memcpy(w->block_saved.data() + at, v.first, v.second);
    at += v.second;
  }
#else
  (void)w;
#endif
}

static void block_shared_restore(Worker* w) {
#ifdef CUDASHIM_ASAN
  size_t at = 0;
  for (const auto& v : w->block_shared) {
    memcpy(v.first, w->block_saved.data() + at, v.second);
    at += v.second;
  }
#else
  (void)w;
#endif
}

static void coop_park(Worker* w) {
  const Fiber* first = nullptr;
  for (int i = 0; i < w->nthreads && !first; ++i)
    if (w->fibers[i].state == WAIT_GRID) first = &w->fibers[i];
  if (w->exited > 0 && !g_abort_launch.load())
    portability("grid.sync() at %s in kernel '%s' was reached by %d of %d threads of a block; the others "
                "had exited (undefined in CUDA; GPUs since Volta release the block's part of the grid "
                "barrier without them)",
                where(*first).c_str(), w->spec->name, w->grid_waiting, w->nthreads);
  Coop& c = coop();
  const unsigned long long b = w->block_lin;
  std::unique_lock<std::mutex> lk(c.m);
  block_shared_save(w);
  c.st[b] = Coop::PARKED;
  c.arrived[b] = w->grid_waiting;
  c.at[b] = first;
  c.turn = -1;
  c.cv.notify_all();
  c.cv.wait(lk, [&] { return c.turn == (long long)b; });
  block_shared_restore(w);
}

static void coop_thread(unsigned long long id) {
  Coop& c = coop();
  Worker* w = worker();
  unsigned long long seen = 0;
  for (;;) {
    std::unique_lock<std::mutex> lk(c.m);
    c.cv.wait(lk, [&] { return c.gen != seen && id < c.nb && c.turn == (long long)id; });
    seen = c.gen;
    const LaunchSpec& s = *c.job;
    lk.unlock();
    prepare_worker(w, s);
    w->coop = _Spin_fibers = true;
    w->spins = 0;
    run_block(w, s, id);
    w->coop = _Spin_fibers = false;
    finish_worker(w);
    lk.lock();
    c.st[id] = Coop::DONE;
    c.turn = -1;
    c.cv.notify_all();
  }
}

static void run_cooperative(const LaunchSpec& s, unsigned long long nb) {
  const Config& cfg = config();
  Coop& c = coop();
  std::unique_lock<std::mutex> lk(c.m);
  while (c.threads.size() < nb) c.threads.emplace_back(coop_thread, (unsigned long long)c.threads.size());
  c.job = &s;
  c.nb = nb;
  c.st.assign(nb, Coop::IDLE);
  c.arrived.assign(nb, 0);
  c.at.assign(nb, nullptr);
  c.gen++;
  std::vector<unsigned long long> order(nb);
  for (unsigned long long round = 0;; ++round) {
    for (unsigned long long i = 0; i < nb; ++i) order[i] = cfg.order == Order::Reverse ? nb - 1 - i : i;
    if (cfg.order == Order::Random) {  // a new block order every round
      std::mt19937_64 rng(cfg.seed * 0xD1B54A32D192ED03ull + round * 0x9E3779B97F4A7C15ull + 7);
      for (unsigned long long i = nb - 1; i > 0; --i) std::swap(order[i], order[rng() % (i + 1)]);
    }
    // Every block still running gets a turn; a block that spun for its whole turn (YIELDED)
    // gets another once the others have had theirs, until each has parked at grid.sync() or
    // exited. A block parked in this round waits for the next.
    for (bool first = true;; first = false) {
      bool yielded = false;
      for (unsigned long long b : order) {
        if (c.st[b] == Coop::DONE || (!first && c.st[b] != Coop::YIELDED)) continue;
        c.st[b] = Coop::RUNNING;
        c.turn = (long long)b;
        c.cv.notify_all();
        c.cv.wait(lk, [&] { return c.turn == -1; });
        yielded |= c.st[b] == Coop::YIELDED;
      }
      if (!yielded) break;
    }
    unsigned long long parked = 0, waiting = 0;
    long long gone = -1;
    for (unsigned long long b = 0; b < nb; ++b) {
      if (c.st[b] == Coop::PARKED) {
        parked++;
        waiting += (unsigned long long)c.arrived[b];
      } else if (gone < 0) {
        gone = (long long)b;
      }
    }
    if (parked == 0) break;
    if (gone >= 0 && !g_abort_launch.load()) {
      const Fiber* f = nullptr;
      for (unsigned long long b = 0; b < nb && !f; ++b)
        if (c.st[b] == Coop::PARKED) f = c.at[b];
      const unsigned long long gx = s.grid.x, gy = s.grid.y, g = (unsigned long long)gone;
      deadlock("cudashim: deadlock in kernel '%s': grid.sync() at %s reached by %llu of %llu threads of the "
               "grid; block (%llu,%llu,%llu) had exited without reaching it (every thread of a cooperative "
               "grid must reach each grid.sync())",
               s.name, where(*f).c_str(), waiting, nb * s.block.x * s.block.y * s.block.z, g % gx,
               (g / gx) % gy, g / (gx * gy));
    }
  }
  c.job = nullptr;
  c.nb = 0;
}

static bool valid_config(const LaunchSpec& s) {
  const dim3 g = s.grid, b = s.block;
  if (b.x == 0 || b.y == 0 || b.z == 0 || g.x == 0 || g.y == 0 || g.z == 0) return false;
  if (b.x > 1024 || b.y > 1024 || b.z > 64) return false;
  if ((unsigned long long)b.x * b.y * b.z > 1024) return false;
  if (g.x > 2147483647u || g.y > 65535 || g.z > 65535) return false;
  return true;
}

static void launch_memory(bool before);
// Device memory is open to the runtime's own work while one lives (see "device memory protection").
using DeviceWindow = _Device_access;
using DeviceRangeWindow = _Device_range_access;  // copies and memsets: their own pages only
static int device_fault(siginfo_t* info);

static std::atomic<long long> g_launches{0};

// Dynamic shared memory a launch may use: 48 KiB until the program opts a kernel in to more
// (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, n), n up to 163 KiB);
// a launch names no kernel pointer, so the largest opt-in holds for every kernel.
static std::atomic<size_t> g_smem_optin{kSmemPerBlock};
void note_smem_optin(size_t bytes) {
  size_t cur = g_smem_optin.load();
  while (bytes > cur && !g_smem_optin.compare_exchange_weak(cur, bytes)) {
  }
}
size_t smem_optin() { return g_smem_optin.load(); }

void run_kernel(const LaunchSpec& s) {
  RunSpan span(RunSpan::Kernels);
  g_launches.fetch_add(1, std::memory_order_relaxed);
  if (tw && tw->cur) fatal("cudashim: kernel '%s' launched from device code (dynamic parallelism) is not supported", s.name);
  if (!valid_config(s)) {
    set_error(cudaErrorInvalidConfiguration);
    return;
  }
  if (s.shmem > smem_optin()) {
    set_error(cudaErrorInvalidValue);
    return;
  }
  if (g_sticky.load() != cudaSuccess) return;  // a GPU context after a device assert runs nothing
  if (no_launch()) return;
  DeviceWindow window;
  launch_memory(true);
  struct After { ~After() { launch_memory(false); } } after;
  const Config& c = config();
  const unsigned long long nb = (unsigned long long)s.grid.x * s.grid.y * s.grid.z;
  std::vector<unsigned long long> perm;
  if (c.order == Order::Random) {
    perm.resize(nb);
    for (unsigned long long i = 0; i < nb; ++i) perm[i] = i;
    std::mt19937_64 rng(c.seed * 0xD1B54A32D192ED03ull + 7);
    for (unsigned long long i = nb - 1; i > 0; --i) std::swap(perm[i], perm[rng() % (i + 1)]);
  }
  if (s.cooperative) {
    const unsigned long long cap = (unsigned long long)kEmulatedSMs *
                                   max_blocks_per_sm((long long)s.block.x * s.block.y * s.block.z, s.shmem);
    if (nb > cap) {
      set_error(cudaErrorCooperativeLaunchTooLarge);
      return;
    }
    {
      // The co-resident grid owns the block threads until it ends: launches from other host
      // threads take their turn.
      static std::mutex one_grid;
      std::lock_guard<std::mutex> lk(one_grid);
#ifdef CUDASHIM_RACE
      race::launch_begins(s);
#endif
      run_cooperative(s, nb);
#ifdef CUDASHIM_RACE
      race::launch_ends();
#endif
    }
    g_abort_launch.store(false);
    return;
  }
#if defined(CUDASHIM_ASAN) || defined(CUDASHIM_RACE)
  // __shared__ is a plain static in the ASan build, and the race detector keeps one record of
  // the launch: launches from several host threads take turns.
  static std::mutex one_launch;
  std::lock_guard<std::mutex> lk(one_launch);
#endif
#ifdef CUDASHIM_RACE
  race::launch_begins(s);
#endif
  run_blocks(s, nb, c.workers, perm.empty() ? nullptr : &perm);
#ifdef CUDASHIM_RACE
  race::launch_ends();
#endif
  g_abort_launch.store(false);
}

void assert_fail(const char* expr, const char* file, unsigned line, const char* func) {
  Worker* w = tw;
  if (!w || (!w->cur && !w->direct)) {
    fflush(stdout);
    fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file, line, func, expr);
    abort();
  }
  fprintf(stderr, "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n", file, line, func,
          blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z, expr);
  g_sticky.store(cudaErrorAssert);
  set_error(cudaErrorAssert);
  g_abort_launch.store(true);
  if (w->direct) {
    // No fiber to abandon: unwind this thread's call back into run_block.
    throw DirectAbort{};
  }
  exit_fiber(w, w->cur);
  __builtin_unreachable();
}

// The rewrite's device division by zero (cuda_runtime.h, gpu_div): a GPU runs on, and says so.
void _Portability_division(const char* what) {
  portability("%s in kernel '%s' (x86 stops the program there; CUDA leaves the value undefined)", what,
              t_kernel ? t_kernel : "host code");
}

void _Portability_warp_step(unsigned line, const char* file) {
  Worker* w = tw;
  if (!w || !w->cur) return;  // host code runs it as one lane
  // Every step of every lane comes here: the lock only when this worker meets another kernel.
  static thread_local std::string t_said;
  if (t_said == w->spec->name) return;
  t_said = w->spec->name;
  static std::mutex m;
  static auto* said = new std::set<std::string>();
  {
    std::lock_guard<std::mutex> lk(m);
    if (!said->insert(w->spec->name).second) return;  // once per kernel
  }
  portability("implicit warp-synchronous code in kernel '%s' (first at %s:%u): lanes exchange values "
              "through volatile memory with no __syncwarp() between; run in step over the lanes that "
              "reach it together, as a converged warp runs it, though CUDA leaves it undefined since "
              "Volta's independent thread scheduling (__syncwarp() or shuffles make it defined)",
              w->spec->name, file, line);
}

// ---------------------------------------------------------------- crash reports
static struct sigaction g_prev_segv, g_prev_bus;
// The size of the last allocation the runtime could not make (cudaMalloc and kin): a program
// that does not check the error goes on with a null pointer, and its fault says why.
static std::atomic<unsigned long long> g_failed_alloc_bytes{0};

// What a fault at a null (or nearly null) address most likely means, for the report.
static void null_pointer_hint(char* out, size_t size, uintptr_t addr) {
  out[0] = 0;
  if (addr >= (1u << 16)) return;
  unsigned long long failed = g_failed_alloc_bytes.load(std::memory_order_relaxed);
  struct rlimit lim{};
  if (failed)
    snprintf(out, size, "; a null pointer: a device allocation of %llu bytes failed earlier "
             "(cudaErrorMemoryAllocation) and the program went on", failed);
  else if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    snprintf(out, size, "; a null pointer: a malloc or new beyond the run's %.1f GiB memory limit "
             "returns one", (double)lim.rlim_cur / (1024.0 * 1024.0 * 1024.0));
  else
    snprintf(out, size, "; a null pointer");
}

// The program's buffered output (a pipe: fully buffered) would die with it; taken only when no
// other code holds stdout's lock, so a fault inside printf cannot hang here.
// A fault k x 4 GiB past shared memory (k an element size): a pointer into shared memory indexed
// by an unsigned 32-bit value below zero (Merge Path's `p[~i]`). A GPU addresses shared memory in
// a 32-bit window, where that index wraps back below the pointer; here it does not.
static void shared_wrap_hint(char* out, size_t size, uintptr_t addr, const Worker* w) {
  SharedSeen regions[17];
  int nr = 0;
  for (int i = 0; i < t_shared_seen_n; ++i) regions[nr++] = t_shared_seen[i];
  if (w && w->smem) regions[nr++] = SharedSeen{reinterpret_cast<uintptr_t>(w->smem), w->smem_cap};
  for (unsigned long long k : {1ull, 2ull, 4ull, 8ull, 16ull}) {
    const uintptr_t shift = (uintptr_t)(k << 32);
    if (addr < shift) continue;
    const uintptr_t a = addr - shift;
    for (int i = 0; i < nr; ++i)
      if (a + 65536 >= regions[i].p && a < regions[i].p + regions[i].n + 65536) {
        snprintf(out, size, "; %llu GiB past shared memory: a pointer into shared memory indexed by an unsigned "
                 "32-bit value below zero (p[~i], p[i - j])? A GPU's 32-bit shared window wraps such an index "
                 "back below the pointer; C++ and CUDA leave it undefined (index with a signed int)",
                 4 * k);
        return;
      }
  }
}

static void flush_stdout_if_free() {
  if (ftrylockfile(stdout) == 0) {
    fflush_unlocked(stdout);
    funlockfile(stdout);
  }
}

static void on_segv(int sig, siginfo_t* info, void*) {
  switch (device_fault(info)) {
    case 1: return;
    case 2: signal(sig, SIG_DFL); return;  // returning re-executes the access and dies
    default: break;
  }
#if defined(CUDASHIM_FIBER_ASAN)
  // AddressSanitizer reports every other fault: its handler takes the re-executed access.
  sigaction(sig, sig == SIGBUS ? &g_prev_bus : &g_prev_segv, nullptr);
  return;
#endif
  Worker* w = tw;
  char buf[768];
  int n;
  const char* what = sig == SIGBUS ? "bus error" : "invalid memory access";
  uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
  char hint[384];
  null_pointer_hint(hint, sizeof hint, addr);
  if (sig == SIGSEGV && info->si_code == SI_KERNEL) {
    // A general-protection fault: the kernel gives no address (si_addr 0), so it is no null
    // pointer; an aligned vector access to a misaligned address, or a non-canonical pointer.
    what = "general protection fault (a misaligned vector access or a non-canonical address)";
    hint[0] = 0;
  }
  flush_stdout_if_free();
  if (w && w->cur && addr >= reinterpret_cast<uintptr_t>(w->cur->stack.lo) - kPage &&
      addr < reinterpret_cast<uintptr_t>(w->cur->stack.lo)) {
    n = snprintf(buf, sizeof buf,
                 "cudashim: stack overflow in kernel '%s' block (%u,%u,%u) thread (%u,%u,%u) (stack of %zu KiB; "
                 "set CUDASHIM_STACK_KB)\n",
                 t_kernel ? t_kernel : "?", blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z,
                 w->cur->stack.size / 1024);
  } else if (w && (w->cur || w->direct)) {  // direct: a barrier-free kernel's threads as plain calls
    if (!hint[0]) shared_wrap_hint(hint, sizeof hint, addr, w);
    n = snprintf(buf, sizeof buf,
                 "cudashim: %s (address %p) in kernel '%s' block (%u,%u,%u) thread (%u,%u,%u)%s\n", what,
                 info->si_addr, t_kernel ? t_kernel : "?", blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x,
                 threadIdx.y, threadIdx.z, hint);
  } else {
    n = snprintf(buf, sizeof buf, "cudashim: %s (address %p) in host code%s\n", what, info->si_addr, hint);
  }
  if (n >= (int)sizeof buf) n = (int)sizeof buf - 1;
  ssize_t r = write(2, buf, n);
  (void)r;
  signal(sig, SIG_DFL);  // returning re-executes the access and dies with the signal
}

static void install_fault_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa{};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, &g_prev_segv);
    sigaction(SIGBUS, &sa, &g_prev_bus);
  });
}

static void install_altstack(Worker* w) {
#ifndef CUDASHIM_FIBER_ASAN
  const size_t sz = 64 * 1024;
  w->altstack = static_cast<char*>(malloc(sz));
  stack_t st{};
  st.ss_sp = w->altstack;
  st.ss_size = sz;
  sigaltstack(&st, nullptr);
  install_fault_handlers();
#else
  (void)w;
#endif
}

// ---------------------------------------------------------------- allocations
static std::mutex g_alloc_mutex;
static std::unordered_set<void*>& device_allocs() {
  static auto* s = new std::unordered_set<void*>();
  return *s;
}
static std::unordered_set<void*>& host_allocs() {
  static auto* s = new std::unordered_set<void*>();
  return *s;
}

// Device allocations by address, for the copies that name no direction (cudaMemcpyDefault).
static std::map<uintptr_t, size_t>& device_ranges() {
  static auto* m = new std::map<uintptr_t, size_t>();
  return *m;
}
// Whether p lies inside one of the [start, start + size) ranges of m.
static bool in_ranges(const std::map<uintptr_t, size_t>& m, const void* p) {
  std::lock_guard<std::mutex> lk(g_alloc_mutex);
  auto it = m.upper_bound(reinterpret_cast<uintptr_t>(p));
  if (it == m.begin()) return false;
  --it;
  return reinterpret_cast<uintptr_t>(p) < it->first + it->second;
}
static bool is_device_memory(const void* p) { return in_ranges(device_ranges(), p); }
// False when [p, p + n) starts in a device allocation and runs past its end: CUDA refuses such
// a copy or memset (cudaErrorInvalidValue) rather than write past the allocation.
static bool device_span_ok(const void* p, size_t n) {
  std::lock_guard<std::mutex> lk(g_alloc_mutex);
  const auto& m = device_ranges();
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = m.upper_bound(a);
  if (it == m.begin()) return true;
  --it;
  if (a >= it->first + it->second) return true;  // not device memory: not ours to judge
  return n <= it->first + it->second - a;
}

// ---------------------------------------------------------------- device memory protection
// On a GPU, host code that dereferences a device pointer faults. Here device memory is host
// memory, so without this a program could read the device's inputs and store an answer it
// computed on the host straight through the device pointer, its kernels doing nothing. Device
// allocations (cudaMalloc, cudaMallocPitch, cudaMalloc3D, cudaMallocAsync; not managed, pinned or
// registered memory, which the host may touch) are carved from a few reserved regions (the
// device arena below), PROT_NONE while host code runs, and opened only while the runtime works
// on them: a launch's blocks, a copy or memset, a library call of the headers
// (cudashim::_Device_access). Windows nest and come from several host threads at once, so one
// count decides; while any is open every device allocation is open (a host thread running beside
// another thread's launch is not caught).
//
// The device arena. Opening and closing must not cost one mprotect per allocation (an iterative
// program makes thousands of launches over dozens of buffers, and each mprotect that closes
// pages shoots down the other threads' TLBs), so allocations share regions and a window is one
// mprotect per region. Regions are reserved PROT_NONE and grow geometrically (64 MiB, then the
// total so far, at most 1 GiB at a time; the exact need when the address-space limit refuses
// more), so there are O(log bytes) of them. Each allocation starts a block of whole pages: its
// bytes, then a red zone (the page tail, at least max(256 bytes, size/16), at most 64 KiB) that
// AddressSanitizer sees as a heap red zone, so an overrun is a heap-buffer-overflow with its line.
// A region's first page is never opened and neither is anything past the page that holds the
// end of its highest live allocation: in every build an access there faults, as an access past
// an allocation's last page did when each had pages of its own. Free blocks are kept first-fit
// and coalesced, so cudaMalloc/cudaFree loops reuse memory.
static std::mutex g_prot_mutex;
static int g_prot_open = 0;
// Thrust builds: Thrust's CPP system runs device algorithms as inlined host code over device
// pointers, which no fault can tell from the program's own host code (see README).
static bool g_prot_off = false;
// Thrust's device-system calls (`_Thrust_device_call`): while any runs, device memory opens at the
// first fault on it (device_fault) rather than at each call, which costs two mprotect calls per
// region: a host loop over a device_vector's elements makes a device call per element and never
// touches cudaMalloc'd memory. Closed again when the last of them returns.
static int g_prot_lazy = 0;
static bool g_lazy_opened = false;
struct DeviceRegion {
  uintptr_t base;
  size_t size;
  uintptr_t open_end;  // windows open [base + kPage, open_end)
  uintptr_t touched;   // end of the part whose ASan shadow was ever written
};
static std::vector<DeviceRegion>& device_regions() {
  static auto* v = new std::vector<DeviceRegion>();
  return *v;
}
// Free blocks of every region, start -> bytes (coalesced; a region's first page keeps the free
// blocks of two adjacent regions apart).
static std::map<uintptr_t, size_t>& device_free() {
  static auto* m = new std::map<uintptr_t, size_t>();
  return *m;
}
// Live allocations: start -> (requested bytes, block bytes including the red zone)
static std::map<uintptr_t, std::pair<size_t, size_t>>& protected_ranges() {
  static auto* m = new std::map<uintptr_t, std::pair<size_t, size_t>>();
  return *m;
}
static bool device_open() { return g_prot_open > 0 || g_prot_off || g_lazy_opened; }
// Range windows (copies, memsets, the poison fill: _Device_range_access): the page spans
// [lo, hi) of the device operands of each one that lives, whether or not a whole window was open
// when it began. Without a whole window only these spans are open, so a copy costs mprotect calls
// over its own pages, not over the arena (which grows with the live allocations). Closing
// anything (a span, or the whole arena) never closes a page that a living span still covers.
// (Never destroyed, like the arena's other tables: a program's static constructors and exit
// handlers may copy.)
static std::vector<std::pair<uintptr_t, uintptr_t>>& range_windows() {
  static auto* v = new std::vector<std::pair<uintptr_t, uintptr_t>>();
  return *v;
}
static void set_access(uintptr_t lo, uintptr_t hi, bool open) {
  // Best effort: a failure (the kernel's limit on mappings) leaves the range as it was.
  if (hi > lo) own_mprotect(reinterpret_cast<void*>(lo), hi - lo, open ? PROT_READ | PROT_WRITE : PROT_NONE);
}
// Closes [lo, hi) except the pages of the living range windows.
static void close_except_ranges(uintptr_t lo, uintptr_t hi) {
  if (hi <= lo) return;
  if (range_windows().empty()) return set_access(lo, hi, false);
  std::vector<std::pair<uintptr_t, uintptr_t>> keep;
  for (auto& s : range_windows())
    if (s.first < hi && s.second > lo) keep.push_back(s);
  std::sort(keep.begin(), keep.end());
  uintptr_t cur = lo;
  for (auto& s : keep) {
    if (s.first > cur) set_access(cur, std::min(s.first, hi), false);
    cur = std::max(cur, s.second);
    if (cur >= hi) return;
  }
  set_access(cur, hi, false);
}
static void set_all_access(bool open) {
  for (auto& r : device_regions()) {
    if (open) set_access(r.base + kPage, r.open_end, true);
    else close_except_ranges(r.base + kPage, r.open_end);
  }
}
static DeviceRegion* region_of(uintptr_t a) {
  for (auto& r : device_regions())
    if (a >= r.base && a < r.base + r.size) return &r;
  return nullptr;
}

#if defined(CUDASHIM_FIBER_ASAN)
// AddressSanitizer's shadow bytes for a heap red zone and freed heap memory: a device allocation's
// red zone must read as an overflow (heap-buffer-overflow), not as use-after-poison, which is what
// ASAN_POISON_MEMORY_REGION would say. Written directly (not through memset, which ASan checks and
// which would fault on the shadow's own shadow); lo and hi are multiples of 8.
static const unsigned char kShadowRedzone = 0xfa, kShadowFreed = 0xfd;
__attribute__((no_sanitize_address)) static void shadow_fill(uintptr_t lo, uintptr_t hi, unsigned char v) {
  size_t scale = 3, offset = 0;
  __asan_get_shadow_mapping(&scale, &offset);
  volatile unsigned char* s = reinterpret_cast<unsigned char*>((lo >> scale) + offset);
  volatile unsigned char* e = reinterpret_cast<unsigned char*>((hi >> scale) + offset);
  while (s < e && reinterpret_cast<uintptr_t>(s) % 8) *s++ = v;
  const uint64_t w = 0x0101010101010101ull * v;
  for (; s + 8 <= e; s += 8) *reinterpret_cast<volatile uint64_t*>(s) = w;
  while (s < e) *s++ = v;
}
#endif

static size_t device_block(size_t n) {
  const size_t rz = std::min<size_t>(std::max<size_t>(n / 16, 256), 64 * 1024);
  if (n > SIZE_MAX / 2) return 0;
  return (n + rz + kPage - 1) / kPage * kPage;
}
// After the highest live allocation of r changed: open_end follows it, and an open window gains
// or loses the difference.
static void update_open_end(DeviceRegion& r) {
  uintptr_t end = r.base + kPage;
  auto it = protected_ranges().lower_bound(r.base + r.size);
  if (it != protected_ranges().begin()) {
    --it;
    if (it->first >= r.base) end = (it->first + it->second.first + kPage - 1) / kPage * kPage;
  }
  if (!device_open()) r.open_end = end;
  else if (end > r.open_end) set_access(r.open_end, end, true);
  else set_access(end, r.open_end, false);
  r.open_end = end;
}
// A new region with room for a block of `block` bytes; its first free block's start, 0 if refused.
static uintptr_t new_region(size_t block) {
  size_t total = 0;
  for (auto& r : device_regions()) total += r.size;
  const size_t need = block + kPage;
  size_t size = std::max(need, std::min<size_t>(std::max<size_t>(total, size_t(64) << 20), size_t(1) << 30));
  void* m = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED && size > need) {  // the address-space limit: reserve what this needs only
    size = need;
    m = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  }
  if (m == MAP_FAILED) return 0;
  const uintptr_t base = reinterpret_cast<uintptr_t>(m);
  device_regions().push_back(DeviceRegion{base, size, base + kPage, base + kPage});
#if defined(CUDASHIM_FIBER_ASAN)
  shadow_fill(base, base + kPage, kShadowRedzone);  // an underflow of the region's first block
#endif
  device_free()[base + kPage] = size - kPage;
  return base + kPage;
}
static void install_fault_handlers();
static bool device_drain_quarantine();
// A device allocation of n bytes (nullptr when there is no memory for it), closed unless a
// window is open.
static void* device_carve(size_t n) {
  const size_t block = device_block(n);
  if (block == 0) return nullptr;
  install_fault_handlers();
  std::lock_guard<std::mutex> lk(g_prot_mutex);
  auto& free_blocks = device_free();
  auto it = free_blocks.begin();
  while (it != free_blocks.end() && it->second < block) ++it;
  if (it == free_blocks.end() && device_drain_quarantine()) {
    it = free_blocks.begin();
    while (it != free_blocks.end() && it->second < block) ++it;
  }
  if (it == free_blocks.end()) {
    const uintptr_t start = new_region(block);
    if (!start) return nullptr;
    it = free_blocks.find(start);
  }
  const uintptr_t p = it->first;
  const size_t left = it->second - block;
  free_blocks.erase(it);
  if (left) free_blocks[p + block] = left;
  protected_ranges()[p] = {n, block};
  DeviceRegion* r = region_of(p);
#if defined(CUDASHIM_FIBER_ASAN)
  shadow_fill(p + n / 8 * 8, p + block, kShadowRedzone);
  ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<void*>(p), n);  // keeps the last granule's size
  if (p + block > r->touched) r->touched = p + block;
#endif
  update_open_end(*r);
  return reinterpret_cast<void*>(p);
}
// Puts a freed block (its pages already given back when large) in the free list, coalesced.
static void device_return(uintptr_t lo, size_t size) {
  DeviceRegion* r = region_of(lo);
  auto& free_blocks = device_free();
  auto next = free_blocks.lower_bound(lo);
  if (next != free_blocks.end() && next->first == lo + size) {
    size += next->second;
    next = free_blocks.erase(next);
  }
  if (next != free_blocks.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == lo) {
      lo = prev->first;
      size += prev->second;
      free_blocks.erase(prev);
    }
  }
  free_blocks[lo] = size;
  // An empty region beside others goes back whole (address space counts against RLIMIT_AS).
  if (lo == r->base + kPage && size == r->size - kPage && device_regions().size() > 1) {
    free_blocks.erase(lo);
#if defined(CUDASHIM_FIBER_ASAN)
    ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<void*>(r->base), r->touched - r->base);
#endif
    munmap(reinterpret_cast<void*>(r->base), r->size);
    device_regions().erase(device_regions().begin() + (r - device_regions().data()));
  }
}
// Freed blocks wait in a quarantine before the arena hands them out again, as AddressSanitizer's
// own heap does: without it, a kernel reading a buffer freed just before the program allocated
// another of the same size reads the new one (and may pass by accident), where the asan build can
// name the use after free. The quarantine holds address space, not memory (large blocks have given
// their pages back), up to a cap, oldest out first, and all of it when the arena is full.
static const size_t kQuarantineBytes = size_t(64) << 20;
static std::deque<std::pair<uintptr_t, size_t>>& device_quarantine() {
  static auto* q = new std::deque<std::pair<uintptr_t, size_t>>();
  return *q;
}
static size_t g_quarantined = 0;
// Gives p's block back to the arena; false if p is not a device allocation of the arena.
static bool device_release(void* p) {
  std::lock_guard<std::mutex> lk(g_prot_mutex);
  auto it = protected_ranges().find(reinterpret_cast<uintptr_t>(p));
  if (it == protected_ranges().end()) return false;
  const uintptr_t lo = it->first;
  const size_t size = it->second.second;
  protected_ranges().erase(it);
#if defined(CUDASHIM_FIBER_ASAN)
  shadow_fill(lo, lo + size, kShadowFreed);  // a later access is a heap-use-after-free
#endif
  // Large blocks give their pages back (the next user of the block gets zero pages).
  if (size >= (size_t(1) << 20)) madvise(reinterpret_cast<void*>(lo), size, MADV_DONTNEED);
  update_open_end(*region_of(lo));
  auto& q = device_quarantine();
  q.emplace_back(lo, size);
  g_quarantined += size;
  while (g_quarantined > kQuarantineBytes && !q.empty()) {
    auto [qlo, qsize] = q.front();
    q.pop_front();
    g_quarantined -= qsize;
    device_return(qlo, qsize);
  }
  return true;
}
// When the arena has no room for a block, what waits in quarantine goes back before new address
// space is reserved: the quarantine delays reuse within the arena, never makes it grow (nor turns
// a program's cudaMalloc into an out-of-memory error).
static bool device_drain_quarantine() {
  auto& q = device_quarantine();
  if (q.empty()) return false;
  for (auto [qlo, qsize] : q) device_return(qlo, qsize);
  q.clear();
  g_quarantined = 0;
  return true;
}
// The pages of n bytes at p that a window may open: those of a device region's openable part.
static std::pair<uintptr_t, uintptr_t> device_span(const void* p, size_t n) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (!p || n == 0) return {0, 0};
  const DeviceRegion* r = region_of(a);
  if (!r) return {0, 0};
  const uintptr_t lo = std::max(a / kPage * kPage, r->base + kPage);
  const uintptr_t end = n > r->base + r->size - a ? r->base + r->size : a + n;
  const uintptr_t hi = std::min((end + kPage - 1) / kPage * kPage, r->open_end);
  return hi > lo ? std::make_pair(lo, hi) : std::make_pair(uintptr_t(0), uintptr_t(0));
}
static bool range_covered(uintptr_t lo, uintptr_t hi) {
  for (auto& s : range_windows())
    if (s.first <= lo && hi <= s.second) return true;
  return false;
}
void _Open_device_range(const void* a, size_t an, const void* b, size_t bn, uintptr_t* spans) {
  spans[0] = spans[1] = spans[2] = spans[3] = 0;
  if (!a && !b) return;
  std::lock_guard<std::mutex> lk(g_prot_mutex);
  if (device_regions().empty()) return;
  const auto sa = device_span(a, an), sb = device_span(b, bn);
  spans[0] = sa.first, spans[1] = sa.second, spans[2] = sb.first, spans[3] = sb.second;
  for (int i = 0; i < 4; i += 2) {
    if (spans[i + 1] <= spans[i]) continue;
    // Under a whole window the span is open already, and stays open when that window closes.
    if (!device_open() && !range_covered(spans[i], spans[i + 1])) set_access(spans[i], spans[i + 1], true);
    range_windows().emplace_back(spans[i], spans[i + 1]);
  }
}
void _Close_device_range(const uintptr_t* spans) {
  if (spans[1] <= spans[0] && spans[3] <= spans[2]) return;
  std::lock_guard<std::mutex> lk(g_prot_mutex);
  for (int i = 0; i < 4; i += 2) {
    if (spans[i + 1] <= spans[i]) continue;
    auto it = std::find(range_windows().begin(), range_windows().end(), std::make_pair(spans[i], spans[i + 1]));
    if (it != range_windows().end()) range_windows().erase(it);
  }
  if (device_open()) return;  // the whole window closes them when it ends
  for (int i = 0; i < 4; i += 2) {
    if (spans[i + 1] <= spans[i]) continue;
    // Only what is still a device region (a region emptied meanwhile may have been unmapped).
    const DeviceRegion* r = region_of(spans[i]);
    if (!r) continue;
    close_except_ranges(std::max(spans[i], r->base + kPage), std::min(spans[i + 1], r->base + r->size));
  }
}
void _Open_device_memory() {
  std::lock_guard<std::mutex> lk(g_prot_mutex);
  if (g_prot_open++ == 0 && !g_prot_off && !g_lazy_opened) set_all_access(true);
}
void _Close_device_memory() {
  std::lock_guard<std::mutex> lk(g_prot_mutex);
  if (--g_prot_open == 0 && !g_prot_off && !g_lazy_opened) set_all_access(false);
}
// Library work: a call of a library that computes without a kernel launch on this backend
// (cuBLAS, cuSPARSE, CUB device-wide, cuRAND host API, cuFFT: `_Library_access` in the headers; Thrust's
// device system: `_Thrust_device_call`), noted once per library as "library <name> <first call>"
// in CUDASHIM_UPLOAD_LOG. The engine leaves out the no-launch run of a program naming a library
// only when its run did such work (validators/engine.py `_library_fallback`).
static std::atomic<unsigned> g_library_noted{0};
// Every computing call, per library (the order of kLibraries, then "other"): the KernelBench
// harness reads them across each forward call (`cudashim_library_calls`).
static std::atomic<long long> g_library_calls[7];
void _Note_library_work(const char* library, const char* call) {
  static const char* const kLibraries[] = {"thrust", "cub", "cublas", "cusparse", "curand", "cufft"};
  unsigned bit = 1u << 6;  // another name: noted under "other"
  unsigned index = 6;
  for (unsigned i = 0; i < 6; i++)
    if (strcmp(library, kLibraries[i]) == 0) bit = 1u << i, index = i;
  g_library_calls[index].fetch_add(1, std::memory_order_relaxed);
  if (g_library_noted.load(std::memory_order_relaxed) & bit) return;
  if (g_library_noted.fetch_or(bit) & bit) return;
  static const char* path = shim_env("CUDASHIM_UPLOAD_LOG");
  if (!path || !*path) return;
  char line[160];
  int n = snprintf(line, sizeof line, "library %.31s %.100s\n", library, call && *call ? call : "?");
  if (n > 0) shim_log(path, line, std::min<size_t>((size_t)n, sizeof line - 1));
}
// A call of Thrust's device system, by the Thrust function that made it (cudashim/thrust_device.h;
// GCC names a function template with its arguments, "reduce<...>"): whether device memory opens
// for it (not for system selection and temporary storage, which touch none); noted as library
// work unless it only moves data (copies, fills, element access).
bool _Thrust_device_call(const char* fn) {
  if (!fn) fn = "?";
  size_t n = strcspn(fn, "<(");
  auto is = [&](const char* name) { return strlen(name) == n && strncmp(fn, name, n) == 0; };
  for (const char* p : {"select_system", "min_system", "malloc", "free", "get_temporary_buffer",
                        "return_temporary_buffer", "temporary_allocator", "get_per_device_resource"})
    if (is(p)) return false;
  {
    std::lock_guard<std::mutex> lk(g_prot_mutex);
    g_prot_lazy++;
  }
  for (const char* m : {"copy", "copy_n", "two_system_copy", "two_system_copy_n", "fill", "fill_n",
                        "uninitialized_copy", "uninitialized_copy_n", "uninitialized_fill",
                        "uninitialized_fill_n", "strip_const_get_value", "strip_const_assign_value",
                        "get_iterator_value", "get_value", "assign_value", "iter_swap", "swap_ranges",
                        "destroy_range"})
    if (is(m)) return true;
  char name[101];
  snprintf(name, sizeof name, "%.*s", (int)std::min<size_t>(n, 100), fn);
  _Note_library_work("thrust", name);
  return true;
}
// The end of a device-system call for which `_Thrust_device_call` returned true.
void _Thrust_device_return() {
  std::lock_guard<std::mutex> lk(g_prot_mutex);
  if (--g_prot_lazy == 0 && g_lazy_opened) {
    g_lazy_opened = false;
    if (g_prot_open == 0 && !g_prot_off) set_all_access(false);
  }
}
// 0: not a fault this handles; 1: device memory opened since the fault (retry the access); 2: host
// code touched closed device memory (reported). Runs in the signal handler: try_lock, retried for
// up to a second, since another thread holds the lock only briefly (opening or closing a window;
// giving up at once made a fault beside another thread's copy read as an unexplained invalid
// access, and a Thrust call's lazy open fail); never an unbounded wait, since the faulting
// thread may hold the lock itself.
static int device_fault(siginfo_t* info) {
  bool locked = g_prot_mutex.try_lock();
  for (int i = 0; !locked && i < 20000; i++) {
    struct timespec pause = {0, 50000};  // 50 us; nanosleep is async-signal-safe
    nanosleep(&pause, nullptr);
    locked = g_prot_mutex.try_lock();
  }
  if (!locked) return 0;
  const uintptr_t a = reinterpret_cast<uintptr_t>(info->si_addr);
  const DeviceRegion* r = region_of(a);
  // Pages that windows open; the rest of a region faults in kernels too (0: reported as usual).
  const bool openable = r && a >= r->base + kPage && a < r->open_end;
  auto& m = protected_ranges();
  auto it = m.upper_bound(a);
  uintptr_t base = 0;
  size_t n = 0;
  bool hit = false;
  if (openable && it != m.begin()) {
    --it;
    hit = a < it->first + it->second.second;  // the allocation or its red zone
    base = it->first;
    n = it->second.first;
  }
  bool open = device_open();
  if (openable && !open && g_prot_lazy > 0) {  // a Thrust device-system call is running
    set_all_access(true);
    g_lazy_opened = open = true;
  }
  g_prot_mutex.unlock();
  if (!openable) return 0;
  if (open) return 1;
  if (!hit) return 0;
  char buf[320];
  int k = snprintf(buf, sizeof buf,
                   "cudashim: host code accessed device memory at %p (device allocation of %zu bytes at %p, "
                   "outside any kernel or runtime copy; a GPU faults here)\n",
                   info->si_addr, n, reinterpret_cast<void*>(base));
  ssize_t r2 = write(2, buf, k > 0 ? (size_t)k : 0);
  (void)r2;
  return 2;
}

// Memory a kernel reads in place, without a copy: managed, pinned and registered host memory.
// In the kernel-work run its runs of the host's inputs are the device's second draw for the
// duration of each launch (then given back); with CUDASHIM_LOG_UPLOADS each launch notes it.
static std::map<uintptr_t, size_t>& mapped_ranges() {
  static auto* m = new std::map<uintptr_t, size_t>();
  return *m;
}
static bool is_mapped(const void* p) { return in_ranges(mapped_ranges(), p); }
static void launch_memory(bool before) {
  if (!g_subst.active() && !(before && log_uploads())) return;
  std::vector<std::pair<uintptr_t, size_t>> ranges;
  {
    std::lock_guard<std::mutex> lk(g_alloc_mutex);
    ranges.assign(mapped_ranges().begin(), mapped_ranges().end());
  }
  for (auto& r : ranges) {
    void* p = reinterpret_cast<void*>(r.first);
    if (before && log_uploads()) note_upload_impl(p, r.second);
    if (before) kernel_input_upload(p, p, r.second);
    else kernel_input_download(p, r.second);
  }
}

static cudaError_t alloc_into(std::unordered_set<void*>& set, void** p, size_t n, bool device_only = false) {
  if (!p) return ret(cudaErrorInvalidValue);
  *p = nullptr;
  if (n == 0) return cudaSuccess;
  void* m = nullptr;
  // Exactly n bytes (aligned like the GPU's allocator), so AddressSanitizer catches overruns.
  // (2 MiB pages, MADV_HUGEPAGE, were tried for the column walks of issue 13 and measured no
  // faster: those walks are bound by cache-set conflicts of the power-of-two row stride.)
  // Device-only memory comes from the device arena, closed to host code, with red zones of its
  // own (see "device memory protection").
  if (device_only) m = device_carve(n);
  else if (posix_memalign(&m, 256, n) != 0) m = nullptr;
  if (!m) {
    g_failed_alloc_bytes.store(n, std::memory_order_relaxed);
    return ret(cudaErrorMemoryAllocation);
  }
  if (&set == &device_allocs()) {
    static std::atomic<unsigned long long> count{0};
    const std::string desc = "device allocation #" + std::to_string(++count) + " (" + std::to_string(n) + " bytes)";
    if (device_only && poison_byte() >= 0) {
      DeviceRangeWindow window(m, n);  // the fill stands for the device's own leftovers
      poison_fill(m, n, desc);
    } else {
      poison_fill(m, n, desc);
    }
#ifdef CUDASHIM_RACE
    race::note_alloc(m, n, desc);
#endif
  }
  std::lock_guard<std::mutex> lk(g_alloc_mutex);
  set.insert(m);
  if (&set == &device_allocs()) device_ranges()[reinterpret_cast<uintptr_t>(m)] = n;
  *p = m;
  return cudaSuccess;
}

static cudaError_t free_from(std::unordered_set<void*>& set, void* p) {
  if (!p) return cudaSuccess;
  {
    std::lock_guard<std::mutex> lk(g_alloc_mutex);
    auto it = set.find(p);
    if (it == set.end()) return ret(cudaErrorInvalidValue);
    set.erase(it);
    device_ranges().erase(reinterpret_cast<uintptr_t>(p));
  }
#ifdef CUDASHIM_RACE
  race::note_free(p);
#endif
  if (!device_release(p)) free(p);
  return cudaSuccess;
}

void* symbol_check(const void* p) { return const_cast<void*>(p); }

struct EventImpl {
  std::chrono::steady_clock::time_point t;
  bool recorded = false;
};

}  // namespace cudashim

struct CUstream_st {
  int flags;
  int priority = 0;
  unsigned long long id = 0;  // cudaStreamGetId
  CUgraph_st* capture = nullptr;  // the graph its work goes to while it captures
};
struct CUevent_st {
  cudashim::EventImpl e;
  CUgraph_st* capture = nullptr;  // recorded in a capturing stream: a stream that waits joins it
};
// CUDA graphs. A node holds its kind, its work (a kernel launch with its argument values, a copy,
// a fill, a host function; none for an empty node), the parameters its Get/SetParams calls read
// and write, and the nodes it depends on. Captured work forms a chain in issue order (the
// program issued it so): each captured node depends on the capture's tail, which it becomes
// (cudaStreamUpdateCaptureDependencies rewrites the tail). An explicit graph's order is its
// dependencies, ties broken by creation order. An instantiated graph (CUgraphExec_st) holds its
// nodes' work in that order, conditional and child graphs as nested instances, and stays valid
// when the graph is destroyed. Graph allocations (GraphAlloc) are device allocations of the
// arena made when their node is made (the address a program reads from the node's parameters),
// live between their allocation node's and their free's execution (closed to ASan otherwise).
namespace cudashim {
struct GraphCond;
struct GraphAlloc;
struct ExecBody;
}  // namespace cudashim
struct CUgraph_st;
struct CUgraphNode_st {
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  std::shared_ptr<cudashim::_Closure> work;
  std::vector<CUgraphNode_st*> deps;
  CUgraph_st* graph = nullptr;                   // the graph it is a node of
  const CUgraphNode_st* origin = nullptr;        // a clone's node: the node it was cloned from
  bool captured = false;                         // recorded from a stream: its parameters are in `work` only
  cudaKernelNodeParams kernel{};                 // kernel (its argument values: work->args())
  cudaMemcpy3DParms copy{};                      // memcpy
  cudaMemsetParams fill{};                       // memset
  cudaHostNodeParams host{};                     // host
  cudaEvent_t event = nullptr;                   // event record / wait
  std::shared_ptr<cudashim::GraphAlloc> alloc;   // memory allocation
  cudaMemPoolProps pool{};                       // memory allocation: the pool it asked for
  void* dptr = nullptr;                          // memory free
  std::shared_ptr<cudashim::GraphCond> cond;     // conditional
  cudaGraphConditionalNodeType ctype = cudaGraphCondTypeIf;
  std::vector<std::unique_ptr<CUgraph_st>> bodies;  // conditional bodies, a child graph
  std::vector<CUgraph_st*> body_ptrs;            // phGraph_out
  std::map<int, cudaLaunchAttributeValue> attrs;  // kernel: launch attributes (kept only)
};
struct CUgraph_st {
  std::vector<std::unique_ptr<CUgraphNode_st>> nodes;
  std::vector<CUgraphNode_st*> tail;      // capture: what the next captured work depends on
  std::vector<CUstream_st*> joined;       // capture: other streams that joined it
  bool captured_into = false;             // cudaStreamBeginCaptureToGraph: the program's own graph
  bool invalidated = false;               // capture: a call a GPU refuses in a capture was made
  std::vector<std::shared_ptr<cudashim::GraphCond>> conds;  // the conditional handles made on it
  CUgraphNode_st* owner = nullptr;        // a body graph: the conditional or child-graph node
};
struct CUgraphExec_st {
  std::shared_ptr<cudashim::ExecBody> body;
  unsigned long long flags = 0;
};
static bool builtin_stream(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread; }
// The stream that holds s's capture state: a GPU captures the per-thread default stream (each
// thread's own) but never the legacy one (nullptr).
static cudaStream_t capture_stream(cudaStream_t s) {
  static thread_local CUstream_st per_thread{};
  if (s == cudaStreamPerThread) return &per_thread;
  return s == nullptr || s == cudaStreamLegacy ? nullptr : s;
}

using namespace cudashim;

namespace cudashim {
namespace {
struct LauncherEntry {
  _Void_launcher launch;
  _Void_binder bind;
  const char* name;
};
std::mutex g_launcher_mutex;
std::unordered_map<const void*, LauncherEntry>& launchers() {
  static auto* m = new std::unordered_map<const void*, LauncherEntry>();
  return *m;
}
}  // namespace
void note_launcher(const void* k, _Void_launcher f, _Void_binder b, const char* name) {
  std::lock_guard<std::mutex> lk(g_launcher_mutex);
  launchers()[k] = {f, b, name};
}
bool find_launcher(const void* k, _Void_launcher* f, const char** name) {
  std::lock_guard<std::mutex> lk(g_launcher_mutex);
  auto it = launchers().find(k);
  if (it == launchers().end()) return false;
  *f = it->second.launch;
  *name = it->second.name;
  return true;
}
bool find_binder(const void* k, _Void_binder* b, const char** name) {
  std::lock_guard<std::mutex> lk(g_launcher_mutex);
  auto it = launchers().find(k);
  if (it == launchers().end()) return false;
  *b = it->second.bind;
  *name = it->second.name;
  return true;
}
}  // namespace cudashim

namespace cudashim {
namespace {
std::mutex g_graph_mutex;
template <class _F>
_Closure* closure(_F&& f) {
  return new _Closure_of<std::decay_t<_F>>(std::forward<_F>(f));
}
// Every node of every graph, so that a node handle a program passes can be checked.
std::unordered_set<const CUgraphNode_st*>& live_nodes() {
  static auto* s = new std::unordered_set<const CUgraphNode_st*>();
  return *s;
}
bool valid_node(const CUgraphNode_st* n) { return n != nullptr && live_nodes().count(n) != 0; }
// The graphs streams capture into now (an event recorded in a capture that ended joins nothing).
std::unordered_set<const CUgraph_st*>& active_captures() {
  static auto* s = new std::unordered_set<const CUgraph_st*>();
  return *s;
}
CUgraphNode_st* add_node(CUgraph_st* g, _Closure* work, const CUgraphNode_st* const* deps, size_t ndeps,
                         cudaGraphNodeType type = cudaGraphNodeTypeKernel) {
  auto n = std::make_unique<CUgraphNode_st>();
  n->type = type;
  n->work.reset(work);
  n->graph = g;
  for (size_t i = 0; i < ndeps; ++i) n->deps.push_back(const_cast<CUgraphNode_st*>(deps[i]));
  live_nodes().insert(n.get());
  g->nodes.push_back(std::move(n));
  return g->nodes.back().get();
}
bool node_of(const CUgraph_st* g, const CUgraphNode_st* n) {
  for (auto& m : g->nodes)
    if (m.get() == n) return true;
  return false;
}
// A graph's nodes (and its body graphs') leave the registry before the graph goes.
void forget_nodes(const CUgraph_st* g) {
  for (auto& n : g->nodes) {
    live_nodes().erase(n.get());
    for (auto& b : n->bodies) forget_nodes(b.get());
  }
}
}  // namespace

// ---- conditional handles: a value per handle, reset when its graph starts running
struct GraphCond {
  std::atomic<unsigned> value{0};
  unsigned dflt = 0, flags = 0;
  ~GraphCond();
};
namespace {
std::mutex g_cond_mutex;
std::unordered_set<const GraphCond*>& cond_handles() {
  static auto* s = new std::unordered_set<const GraphCond*>();
  return *s;
}
}  // namespace
GraphCond::~GraphCond() {
  std::lock_guard<std::mutex> lk(g_cond_mutex);
  cond_handles().erase(this);
}
void graph_set_conditional(cudaGraphConditionalHandle h, unsigned int value) {
  auto* c = reinterpret_cast<GraphCond*>(static_cast<uintptr_t>(h));
  std::lock_guard<std::mutex> lk(g_cond_mutex);
  if (!cond_handles().count(c))
    fatal("cudashim: graph: cudaGraphSetConditional: %#llx is not a conditional handle of a live graph "
          "(cudaGraphConditionalHandleCreate)", h);
  c->value.store(value);
}

// ---- graph allocations (memory allocation and free nodes, cudaMallocAsync in a capture)
struct GraphAlloc {
  void* ptr = nullptr;
  size_t bytes = 0;
  bool live = false;
  std::string desc;
  ~GraphAlloc();
};
namespace {
std::mutex g_gmem_mutex;
// The graph allocator's footprint: the device memory graphs hold (it stays after a free, for the
// next graph allocation, until cudaDeviceGraphMemTrim), and what live allocations use of it.
struct GraphMemory {
  size_t live = 0, reserved = 0, used_high = 0, reserved_high = 0;
} g_gmem;
std::map<uintptr_t, std::weak_ptr<GraphAlloc>>& graph_allocs() {
  static auto* m = new std::map<uintptr_t, std::weak_ptr<GraphAlloc>>();
  return *m;
}
// The live ones are kept (a program may free them with cudaFree after their graph is gone).
std::unordered_map<const GraphAlloc*, std::shared_ptr<GraphAlloc>>& live_graph_allocs() {
  static auto* m = new std::unordered_map<const GraphAlloc*, std::shared_ptr<GraphAlloc>>();
  return *m;
}
// Between its free and its next allocation node, a graph allocation is freed memory to ASan.
void graph_mem_close(void* p, size_t n) {
#if defined(CUDASHIM_FIBER_ASAN)
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p);
  shadow_fill(lo, lo + (n + 7) / 8 * 8, kShadowFreed);
#else
  (void)p, (void)n;
#endif
}
void graph_mem_open(void* p, size_t n) {
#if defined(CUDASHIM_FIBER_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
  (void)p, (void)n;
#endif
}
std::shared_ptr<GraphAlloc> find_graph_alloc(const void* p) {
  std::lock_guard<std::mutex> lk(g_gmem_mutex);
  auto it = graph_allocs().find(reinterpret_cast<uintptr_t>(p));
  return it == graph_allocs().end() ? nullptr : it->second.lock();
}
// The address is the arena's (cudaMalloc's path: red zones, the race build's table, poison).
cudaError_t graph_alloc_create(size_t bytes, std::shared_ptr<GraphAlloc>& out) {
  static std::atomic<unsigned long long> count{0};
  void* p = nullptr;
  cudaError_t r = alloc_into(device_allocs(), &p, bytes, true);
  if (r != cudaSuccess) return r;
  auto a = std::make_shared<GraphAlloc>();
  a->ptr = p;
  a->bytes = bytes;
  a->desc = "graph allocation #" + std::to_string(++count) + " (" + std::to_string(bytes) + " bytes)";
  graph_mem_close(p, bytes);
  std::lock_guard<std::mutex> lk(g_gmem_mutex);
  graph_allocs()[reinterpret_cast<uintptr_t>(p)] = a;
  out = std::move(a);
  return cudaSuccess;
}
// An allocation node runs: the allocation is live, its contents undefined (poisoned if asked).
cudaError_t graph_alloc_run(const std::shared_ptr<GraphAlloc>& a) {
  {
    std::lock_guard<std::mutex> lk(g_gmem_mutex);
    if (a->live) return cudaErrorInvalidValue;
    a->live = true;
    g_gmem.live += a->bytes;
    g_gmem.reserved = std::max(g_gmem.reserved, g_gmem.live);
    g_gmem.used_high = std::max(g_gmem.used_high, g_gmem.reserved);
    g_gmem.reserved_high = std::max(g_gmem.reserved_high, g_gmem.reserved);
    live_graph_allocs()[a.get()] = a;
  }
  graph_mem_open(a->ptr, a->bytes);
  if (poison_byte() >= 0) {
    DeviceRangeWindow window(a->ptr, a->bytes);
    poison_fill(a->ptr, a->bytes, a->desc);
  }
  return cudaSuccess;
}
// Frees p's graph allocation (a free node, cudaFree, cudaFreeAsync): false if p is none; *err is
// cudaErrorInvalidValue if it is not live.
bool graph_alloc_free(void* p, cudaError_t* err) {
  std::shared_ptr<GraphAlloc> a = find_graph_alloc(p), keep;
  if (!a) return false;
  std::lock_guard<std::mutex> lk(g_gmem_mutex);
  *err = a->live ? cudaSuccess : cudaErrorInvalidValue;
  if (!a->live) return true;
  a->live = false;
  g_gmem.live -= a->bytes;
  auto it = live_graph_allocs().find(a.get());
  if (it != live_graph_allocs().end()) {
    keep = std::move(it->second);  // released with `a`, after the lock
    live_graph_allocs().erase(it);
  }
  graph_mem_close(a->ptr, a->bytes);
  return true;
}
}  // namespace
GraphAlloc::~GraphAlloc() {
  {
    std::lock_guard<std::mutex> lk(g_gmem_mutex);
    auto it = graph_allocs().find(reinterpret_cast<uintptr_t>(ptr));
    if (it != graph_allocs().end() && it->second.expired()) graph_allocs().erase(it);
  }
  graph_mem_open(ptr, bytes);  // the arena's free marks it again
  free_from(device_allocs(), ptr);
}

// ---- instantiated graphs
struct ExecStep {
  cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
  const CUgraphNode_st* node = nullptr;  // the node it was made from
  const CUgraphNode_st* key = nullptr;   // the node of the graph first instantiated (after updates)
  std::shared_ptr<_Closure> work;
  std::shared_ptr<GraphAlloc> alloc;
  void* dptr = nullptr;
  std::shared_ptr<GraphCond> cond;
  cudaGraphConditionalNodeType ctype = cudaGraphCondTypeIf;
  std::vector<std::shared_ptr<ExecBody>> bodies;
  bool enabled = true;
};
// A node as cudaGraphExecUpdate compares it: its kind, the creation indices of its dependencies.
struct NodeShape {
  cudaGraphNodeType type;
  std::vector<size_t> deps;
  cudaGraphConditionalNodeType ctype;
  const GraphAlloc* alloc;
  void* dptr;
};
struct ExecBody {
  std::vector<ExecStep> steps;                      // in execution order
  std::vector<size_t> step_of;                      // a node's creation index: its step
  std::vector<NodeShape> shape;                     // by creation index
  std::vector<std::shared_ptr<GraphCond>> conds;    // set to their defaults when the graph starts
  std::vector<std::shared_ptr<GraphAlloc>> allocs;  // its allocations and its bodies'
};
namespace {
std::vector<size_t> dep_indices(const CUgraphNode_st* n,
                                const std::unordered_map<const CUgraphNode_st*, size_t>& index) {
  std::vector<size_t> v;
  for (auto* d : n->deps) {
    auto it = index.find(d);
    v.push_back(it == index.end() ? SIZE_MAX : it->second);
  }
  std::sort(v.begin(), v.end());
  return v;
}
// What a conditional body may hold (CUDA 12/13: kernels, empty nodes, child graphs, memsets,
// memcopies and conditionals).
bool allowed_in_conditional(cudaGraphNodeType t) {
  return t == cudaGraphNodeTypeKernel || t == cudaGraphNodeTypeEmpty || t == cudaGraphNodeTypeGraph ||
         t == cudaGraphNodeTypeMemset || t == cudaGraphNodeTypeMemcpy || t == cudaGraphNodeTypeConditional;
}
// Instantiates g (under g_graph_mutex): steps in dependency order (Kahn), ties by creation order;
// a cycle is not a graph. *bad: the node at fault.
cudaError_t build(const CUgraph_st* g, bool in_conditional, std::shared_ptr<ExecBody>& out,
                  const CUgraphNode_st** bad) {
  auto b = std::make_shared<ExecBody>();
  const size_t count = g->nodes.size();
  std::unordered_map<const CUgraphNode_st*, size_t> index;
  for (size_t i = 0; i < count; ++i) index[g->nodes[i].get()] = i;
  b->step_of.assign(count, SIZE_MAX);
  std::vector<char> done(count, 0);
  size_t ndone = 0;
  for (bool progress = true; progress && ndone < count;) {
    progress = false;
    for (size_t i = 0; i < count; ++i) {
      if (done[i]) continue;
      const CUgraphNode_st* n = g->nodes[i].get();
      bool ready = true;
      for (auto* d : n->deps) {
        auto it = index.find(d);
        ready = ready && it != index.end() && done[it->second];
      }
      if (!ready) continue;
      done[i] = 1;
      ++ndone;
      progress = true;
      if (in_conditional && !allowed_in_conditional(n->type)) {
        *bad = n;
        return cudaErrorNotSupported;
      }
      ExecStep st;
      st.type = n->type;
      st.node = st.key = n;
      st.work = n->work;
      st.alloc = n->alloc;
      st.dptr = n->dptr;
      st.cond = n->cond;
      st.ctype = n->ctype;
      if (n->alloc) b->allocs.push_back(n->alloc);
      for (auto& body : n->bodies) {
        std::shared_ptr<ExecBody> sub;
        cudaError_t r = build(body.get(), in_conditional || n->type == cudaGraphNodeTypeConditional, sub, bad);
        if (r != cudaSuccess) return r;
        b->allocs.insert(b->allocs.end(), sub->allocs.begin(), sub->allocs.end());
        st.bodies.push_back(std::move(sub));
      }
      b->step_of[i] = b->steps.size();
      b->steps.push_back(std::move(st));
    }
  }
  if (ndone < count) {
    *bad = nullptr;
    return cudaErrorInvalidValue;
  }
  for (size_t i = 0; i < count; ++i) {
    const CUgraphNode_st* n = g->nodes[i].get();
    b->shape.push_back(NodeShape{n->type, dep_indices(n, index), n->ctype, n->alloc.get(), n->dptr});
  }
  b->conds = g->conds;
  out = std::move(b);
  return cudaSuccess;
}
void run_body(const ExecBody& b);
void run_conditional(const ExecStep& st) {
  switch (st.ctype) {
    case cudaGraphCondTypeIf:
      if (st.cond->value.load()) run_body(*st.bodies[0]);
      else if (st.bodies.size() > 1) run_body(*st.bodies[1]);
      break;
    case cudaGraphCondTypeWhile:  // a device assert stops what stops kernels
      while (st.cond->value.load() && g_sticky.load() == cudaSuccess) run_body(*st.bodies[0]);
      break;
    case cudaGraphCondTypeSwitch: {
      const unsigned v = st.cond->value.load();
      if (v < st.bodies.size()) run_body(*st.bodies[v]);
      break;
    }
  }
}
void run_body(const ExecBody& b) {
  for (auto& c : b.conds) c->value.store((c->flags & cudaGraphCondAssignDefault) ? c->dflt : 0);
  for (auto& st : b.steps) {
    if (!st.enabled) continue;
    if (st.type == cudaGraphNodeTypeMemAlloc) {
      cudaError_t e = graph_alloc_run(st.alloc);
      if (e != cudaSuccess) ret(e);
    } else if (st.type == cudaGraphNodeTypeMemFree) {
      cudaError_t e = cudaSuccess;
      if (!graph_alloc_free(st.dptr, &e)) e = cudaErrorInvalidValue;
      if (e != cudaSuccess) ret(e);
    } else if (st.type == cudaGraphNodeTypeConditional) {
      run_conditional(st);
    } else if (!st.bodies.empty()) {
      run_body(*st.bodies[0]);  // a child graph
    } else if (st.work) {
      st.work->run();
    }
  }
}
// The step of node n in b or its bodies (keyed by the nodes of the graph first instantiated, or
// of the graph of the last update).
ExecStep* find_step(ExecBody& b, const CUgraphNode_st* n) {
  for (auto& st : b.steps) {
    if (st.key == n || st.node == n) return &st;
    for (auto& sub : st.bodies)
      if (ExecStep* r = find_step(*sub, n)) return r;
  }
  return nullptr;
}
// After an update: the new instance answers to the old one's keys (and its enabled states).
void carry_keys(ExecBody& nu, const ExecBody& old) {
  for (size_t i = 0; i < nu.step_of.size() && i < old.step_of.size(); ++i) {
    ExecStep& a = nu.steps[nu.step_of[i]];
    const ExecStep& o = old.steps[old.step_of[i]];
    a.key = o.key;
    a.enabled = o.enabled;
    for (size_t j = 0; j < a.bodies.size() && j < o.bodies.size(); ++j) carry_keys(*a.bodies[j], *o.bodies[j]);
  }
}
// Whether g may replace the graph b was made from (same nodes in creation order, same kinds and
// edges, same memory nodes; a kernel's function and every node's parameters may change).
cudaGraphExecUpdateResult same_shape(const ExecBody& b, const CUgraph_st* g, cudaGraphExecUpdateResultInfo* info) {
  if (g->nodes.size() != b.shape.size()) return cudaGraphExecUpdateErrorTopologyChanged;
  std::unordered_map<const CUgraphNode_st*, size_t> index;
  for (size_t i = 0; i < g->nodes.size(); ++i) index[g->nodes[i].get()] = i;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const CUgraphNode_st* n = g->nodes[i].get();
    if (dep_indices(n, index) != b.shape[i].deps) {
      info->errorNode = const_cast<CUgraphNode_st*>(n);
      info->errorFromNode = n->deps.empty() ? nullptr : n->deps[0];
      return cudaGraphExecUpdateErrorTopologyChanged;
    }
  }
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const CUgraphNode_st* n = g->nodes[i].get();
    const NodeShape& s = b.shape[i];
    info->errorNode = const_cast<CUgraphNode_st*>(n);
    if (n->type != s.type) return cudaGraphExecUpdateErrorNodeTypeChanged;
    if (n->alloc.get() != s.alloc || n->dptr != s.dptr) return cudaGraphExecUpdateErrorNotSupported;
    const ExecStep& st = b.steps[b.step_of[i]];
    if (n->bodies.size() != st.bodies.size() || (n->type == cudaGraphNodeTypeConditional && n->ctype != s.ctype))
      return cudaGraphExecUpdateErrorParametersChanged;
    for (size_t j = 0; j < n->bodies.size(); ++j) {
      cudaGraphExecUpdateResult r = same_shape(*st.bodies[j], n->bodies[j].get(), info);
      if (r != cudaGraphExecUpdateSuccess) return r;
    }
  }
  info->errorNode = nullptr;
  return cudaGraphExecUpdateSuccess;
}
// A graph launched while allocations of its own are live: refused, unless it was instantiated to
// free them on launch (cudaGraphInstantiateFlagAutoFreeOnLaunch).
cudaError_t allocs_ready(const ExecBody& b, bool auto_free) {
  for (auto& a : b.allocs) {
    bool live;
    {
      std::lock_guard<std::mutex> lk(g_gmem_mutex);
      live = a->live;
    }
    if (!live) continue;
    if (!auto_free) return cudaErrorInvalidValue;
    cudaError_t e;
    graph_alloc_free(a->ptr, &e);
  }
  return cudaSuccess;
}
bool has_memory_nodes(const CUgraph_st* g) {
  for (auto& n : g->nodes) {
    if (n->type == cudaGraphNodeTypeMemAlloc || n->type == cudaGraphNodeTypeMemFree) return true;
    for (auto& b : n->bodies)
      if (has_memory_nodes(b.get())) return true;
  }
  return false;
}
// A copy of g (under g_graph_mutex): the same work, handles and parameters, its own nodes.
std::unique_ptr<CUgraph_st> clone_graph(const CUgraph_st* g, CUgraphNode_st* owner) {
  auto c = std::make_unique<CUgraph_st>();
  c->owner = owner;
  c->conds = g->conds;
  std::unordered_map<const CUgraphNode_st*, CUgraphNode_st*> map;
  for (auto& n : g->nodes) {
    auto m = std::make_unique<CUgraphNode_st>();
    m->type = n->type;
    m->work = n->work;
    m->graph = c.get();
    m->origin = n.get();
    m->captured = n->captured;
    m->kernel = n->kernel;
    m->copy = n->copy;
    m->fill = n->fill;
    m->host = n->host;
    m->event = n->event;
    m->alloc = n->alloc;
    m->pool = n->pool;
    m->dptr = n->dptr;
    m->cond = n->cond;
    m->ctype = n->ctype;
    m->attrs = n->attrs;
    for (auto& b : n->bodies) {
      m->bodies.push_back(clone_graph(b.get(), m.get()));
      m->body_ptrs.push_back(m->bodies.back().get());
    }
    map[n.get()] = m.get();
    live_nodes().insert(m.get());
    c->nodes.push_back(std::move(m));
  }
  for (size_t i = 0; i < g->nodes.size(); ++i)
    for (auto* d : g->nodes[i]->deps) c->nodes[i]->deps.push_back(map[d]);
  return c;
}
// ---- the work of each kind of node
cudaError_t bind_kernel(const cudaKernelNodeParams* p, std::shared_ptr<_Closure>& out) {
  if (p == nullptr) return cudaErrorInvalidValue;
  if (p->kernelParams == nullptr && p->extra != nullptr)
    fatal("cudashim: needs a GPU: a graph kernel node whose arguments come packed in `extra` "
          "(CU_LAUNCH_PARAM_BUFFER_POINTER) is not in the CPU shim; pass kernelParams");
  _Void_binder bind = nullptr;
  const char* name = nullptr;
  if (!find_binder(p->func, &bind, &name)) return cudaErrorInvalidDeviceFunction;
  out.reset(bind(name, p->func, p->gridDim, p->blockDim, p->kernelParams, p->sharedMemBytes));
  return out ? cudaSuccess : cudaErrorInvalidValue;  // no kernelParams for a kernel with parameters
}
cudaKernelNodeParams kernel_record(const cudaKernelNodeParams& p) {
  cudaKernelNodeParams k = p;
  k.kernelParams = nullptr;  // the node's own copies answer (work->args())
  k.extra = nullptr;
  return k;
}
std::shared_ptr<_Closure> copy_work(const cudaMemcpy3DParms& p) {
  return std::shared_ptr<_Closure>(closure([p] { cudaMemcpy3D(&p); }));
}
cudaMemcpy3DParms copy_1d(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  cudaMemcpy3DParms p{};
  p.srcPtr = make_cudaPitchedPtr(const_cast<void*>(src), count, count, 1);
  p.dstPtr = make_cudaPitchedPtr(dst, count, count, 1);
  p.extent = make_cudaExtent(count, 1, 1);
  p.kind = kind;
  return p;
}
bool copy_ok(const cudaMemcpy3DParms* p) {
  return p != nullptr && (p->srcArray != nullptr || p->srcPtr.ptr != nullptr) &&
         (p->dstArray != nullptr || p->dstPtr.ptr != nullptr) && p->kind >= cudaMemcpyHostToHost &&
         p->kind <= cudaMemcpyDefault;
}
bool fill_ok(const cudaMemsetParams* p) {
  return p != nullptr && p->dst != nullptr && (p->elementSize == 1 || p->elementSize == 2 || p->elementSize == 4) &&
         (p->height <= 1 || p->pitch >= p->width * p->elementSize);
}
// A fill of width elements of elementSize bytes (the low bytes of value) in each of height rows.
std::shared_ptr<_Closure> fill_work(const cudaMemsetParams& m) {
  return std::shared_ptr<_Closure>(closure([m] {
    const size_t rows = m.height ? m.height : 1, bytes = m.width * m.elementSize;
    std::vector<unsigned char> row(m.elementSize == 1 ? 0 : bytes);
    for (size_t i = 0; i < m.width && m.elementSize != 1; ++i)
      memcpy(row.data() + i * m.elementSize, &m.value, m.elementSize);
    for (size_t r = 0; r < rows; ++r) {
      char* dst = static_cast<char*>(m.dst) + r * m.pitch;
      if (m.elementSize == 1) cudaMemset(dst, (int)(m.value & 0xff), m.width);
      else cudaMemcpy(dst, row.data(), bytes, cudaMemcpyHostToDevice);
    }
  }));
}
std::shared_ptr<_Closure> host_work(const cudaHostNodeParams& h) {
  return std::shared_ptr<_Closure>(closure([h] { h.fn(h.userData); }));
}
std::shared_ptr<_Closure> record_work(cudaEvent_t e) {
  return std::shared_ptr<_Closure>(closure([e] { cudaEventRecord(e, 0); }));
}
std::unique_ptr<CUgraphNode_st> make_node(cudaGraphNodeType type, std::shared_ptr<_Closure> work = nullptr) {
  auto m = std::make_unique<CUgraphNode_st>();
  m->type = type;
  m->work = std::move(work);
  return m;
}
// Adds m to g after deps (each a node of g).
cudaError_t add_built(cudaGraphNode_t* out, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                      std::unique_ptr<CUgraphNode_st> m) {
  if (out == nullptr || g == nullptr || (ndeps && deps == nullptr)) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  for (size_t i = 0; i < ndeps; ++i)
    if (!node_of(g, deps[i])) return ret(cudaErrorInvalidValue);
  m->graph = g;
  m->deps.assign(deps, deps + ndeps);
  live_nodes().insert(m.get());
  g->nodes.push_back(std::move(m));
  *out = g->nodes.back().get();
  return cudaSuccess;
}
// A node handle of the program, of the given kind (under g_graph_mutex).
bool node_is(const CUgraphNode_st* n, cudaGraphNodeType t) { return valid_node(n) && n->type == t; }
[[noreturn]] void captured_params(const char* call) {
  fatal("cudashim: needs a GPU: %s of a node recorded by stream capture (the CPU shim keeps a captured "
        "node's work, not its parameters)", call);
}
// Fills out[0, *count) from v (nullptr past v's end) and sets *count; only *count when out is nullptr.
template <class _T>
void list_out(const std::vector<_T>& v, _T* out, size_t* count) {
  if (out == nullptr) {
    *count = v.size();
    return;
  }
  for (size_t i = 0; i < *count; ++i) out[i] = i < v.size() ? v[i] : nullptr;
  *count = std::min(*count, v.size());
}
}  // namespace

bool capturing(cudaStream_t s) {
  s = capture_stream(s);
  if (s == nullptr) return false;
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  return s->capture != nullptr;
}
// A GPU records nothing more into an invalidated capture: the call fails, its work is dropped.
cudaError_t capture(cudaStream_t s, _Closure* work, cudaGraphNodeType type) {
  std::unique_ptr<_Closure> owned(work);
  s = capture_stream(s);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  CUgraph_st* g = s->capture;
  if (g->invalidated) return ret(cudaErrorStreamCaptureInvalidated);
  CUgraphNode_st* n = add_node(g, owned.release(), g->tail.data(), g->tail.size(), type);
  n->captured = true;
  g->tail.assign(1, n);
  return cudaSuccess;
}
void capture(cudaStream_t s, _Closure* work) { capture(s, work, cudaGraphNodeTypeKernel); }
// A library call (the headers' cuBLAS, cuFFT, cuRAND, cuSPARSE) on a capturing stream: on a GPU
// its kernels are nodes of the capture, run by each launch of the graph and not by the call, so
// the work is a kernel node here, library work each time it runs.
cudaError_t capture_library_call(cudaStream_t s, _Closure* work, const char* library, const char* call) {
  std::shared_ptr<_Closure> w(work);
  return capture(s, closure([w, library, call] {
                   _Library_access access(library, call);
                   w->run();
                 }),
                 cudaGraphNodeTypeKernel);
}
// A call a GPU refuses while s captures (one that waits for the device, or hands the host a
// result it would have to wait for) invalidates the capture, as on a GPU: later work into it
// fails and cudaStreamEndCapture gives no graph.
void invalidate_capture(cudaStream_t s) {
  s = capture_stream(s);
  if (s == nullptr) return;
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (s->capture) s->capture->invalidated = true;
}
// cudaMallocAsync on a capturing stream: an allocation node of the capture.
cudaError_t graph_capture_malloc(cudaStream_t s, void** p, size_t n) {
  s = capture_stream(s);
  if (p == nullptr) return ret(cudaErrorInvalidValue);
  *p = nullptr;
  if (n == 0) return cudaSuccess;
  {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    if (s->capture->invalidated) return ret(cudaErrorStreamCaptureInvalidated);
  }
  std::shared_ptr<GraphAlloc> a;
  cudaError_t r = graph_alloc_create(n, a);
  if (r != cudaSuccess) return r;
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  CUgraph_st* g = s->capture;
  CUgraphNode_st* node = add_node(g, nullptr, g->tail.data(), g->tail.size(), cudaGraphNodeTypeMemAlloc);
  node->captured = true;
  node->alloc = a;
  node->pool.allocType = cudaMemAllocationTypePinned;
  node->pool.location = cudaMemLocation{cudaMemLocationTypeDevice, 0};
  g->tail.assign(1, node);
  *p = a->ptr;
  return cudaSuccess;
}
// cudaFreeAsync on a capturing stream: a free node if p is a graph allocation (else false).
bool graph_capture_free(cudaStream_t s, void* p) {
  s = capture_stream(s);
  if (!find_graph_alloc(p)) return false;
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  CUgraph_st* g = s->capture;
  CUgraphNode_st* node = add_node(g, nullptr, g->tail.data(), g->tail.size(), cudaGraphNodeTypeMemFree);
  node->captured = true;
  node->dptr = p;
  g->tail.assign(1, node);
  return true;
}
// cudaFree / cudaFreeAsync of a graph allocation: it is freed, its address kept for its node.
bool graph_alloc_release(void* p, cudaError_t* err) { return p != nullptr && graph_alloc_free(p, err); }
}  // namespace cudashim

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode) {
  s = capture_stream(s);
  if (s == nullptr) return ret(cudaErrorStreamCaptureUnsupported);  // the legacy stream
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (s->capture) return ret(cudaErrorIllegalState);
  s->capture = new CUgraph_st();
  active_captures().insert(s->capture);
  return cudaSuccess;
}
cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t s, cudaGraph_t g, const cudaGraphNode_t* deps,
                                          const cudaGraphEdgeData*, size_t ndeps, cudaStreamCaptureMode) {
  s = capture_stream(s);
  if (s == nullptr) return ret(cudaErrorStreamCaptureUnsupported);
  if (g == nullptr || (ndeps && deps == nullptr)) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (s->capture || g->captured_into) return ret(cudaErrorIllegalState);
  for (size_t i = 0; i < ndeps; ++i)
    if (!node_of(g, deps[i])) return ret(cudaErrorInvalidValue);
  g->tail.assign(deps, deps + ndeps);
  g->captured_into = true;
  s->capture = g;
  active_captures().insert(g);
  return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* g) {
  s = capture_stream(s);
  if (s == nullptr) return ret(cudaErrorInvalidValue);
  CUgraph_st* dropped = nullptr;  // an invalidated capture's own graph, destroyed after the lock
  {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    if (!s->capture) return ret(cudaErrorIllegalState);
    CUgraph_st* cg = s->capture;
    if (g == nullptr && !cg->captured_into) return ret(cudaErrorInvalidValue);
    const bool invalidated = cg->invalidated;
    if (invalidated && !cg->captured_into) dropped = cg;
    if (g) *g = invalidated ? nullptr : cg;
    for (CUstream_st* j : cg->joined) j->capture = nullptr;  // they joined back by now
    cg->joined.clear();
    cg->tail.clear();
    cg->captured_into = false;
    cg->invalidated = false;
    active_captures().erase(cg);
    s->capture = nullptr;
    if (!invalidated) return cudaSuccess;
  }
  if (dropped) cudaGraphDestroy(dropped);
  return ret(cudaErrorStreamCaptureInvalidated);
}
cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* status) {
  if (status == nullptr) return ret(cudaErrorInvalidValue);
  *status = cudaStreamCaptureStatusNone;
  s = capture_stream(s);
  if (s == nullptr) return cudaSuccess;
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (s->capture)
    *status = s->capture->invalidated ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}
cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  return mode ? cudaSuccess : ret(cudaErrorInvalidValue);
}
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t* deps, size_t ndeps,
                                                unsigned int flags) {
  if (ndeps && deps == nullptr) return ret(cudaErrorInvalidValue);
  if (flags != cudaStreamAddCaptureDependencies && flags != cudaStreamSetCaptureDependencies)
    return ret(cudaErrorInvalidValue);
  s = capture_stream(s);
  if (s == nullptr) return ret(cudaErrorIllegalState);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  CUgraph_st* g = s->capture;
  if (!g) return ret(cudaErrorIllegalState);
  for (size_t i = 0; i < ndeps; ++i)
    if (!node_of(g, deps[i])) return ret(cudaErrorInvalidValue);
  if (flags == cudaStreamSetCaptureDependencies) g->tail.clear();
  for (size_t i = 0; i < ndeps; ++i)
    if (std::find(g->tail.begin(), g->tail.end(), deps[i]) == g->tail.end()) g->tail.push_back(deps[i]);
  return cudaSuccess;
}
cudaError_t cudaGraphCreate(cudaGraph_t* g, unsigned int flags) {
  if (g == nullptr || flags != 0) return ret(cudaErrorInvalidValue);
  *g = new CUgraph_st();
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  if (g == nullptr || g->owner != nullptr) return ret(cudaErrorInvalidValue);  // a body graph is its node's
  {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    forget_nodes(g);
  }
  delete g;
  return cudaSuccess;
}
static cudaError_t add_work(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                            cudaGraphNodeType type, std::shared_ptr<_Closure> work) {
  return add_built(n, g, deps, ndeps, make_node(type, std::move(work)));
}
cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                   const cudaKernelNodeParams* p) {
  std::shared_ptr<_Closure> work;
  cudaError_t r = bind_kernel(p, work);
  if (r != cudaSuccess) return ret(r);
  auto m = make_node(cudaGraphNodeTypeKernel, std::move(work));
  m->kernel = kernel_record(*p);
  return add_built(n, g, deps, ndeps, std::move(m));
}
cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                   const cudaMemcpy3DParms* p) {
  if (!copy_ok(p)) return ret(cudaErrorInvalidValue);
  auto m = make_node(cudaGraphNodeTypeMemcpy, copy_work(*p));
  m->copy = *p;
  return add_built(n, g, deps, ndeps, std::move(m));
}
cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                     void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  const cudaMemcpy3DParms p = copy_1d(dst, src, count, kind);
  return cudaGraphAddMemcpyNode(n, g, deps, ndeps, &p);
}
cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                   const cudaMemsetParams* p) {
  if (!fill_ok(p)) return ret(cudaErrorInvalidValue);
  auto m = make_node(cudaGraphNodeTypeMemset, fill_work(*p));
  m->fill = *p;
  return add_built(n, g, deps, ndeps, std::move(m));
}
cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                 const cudaHostNodeParams* p) {
  if (p == nullptr || p->fn == nullptr) return ret(cudaErrorInvalidValue);
  auto m = make_node(cudaGraphNodeTypeHost, host_work(*p));
  m->host = *p;
  return add_built(n, g, deps, ndeps, std::move(m));
}
cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps) {
  return add_work(n, g, deps, ndeps, cudaGraphNodeTypeEmpty, nullptr);
}
cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                        cudaEvent_t e) {
  if (e == nullptr) return ret(cudaErrorInvalidValue);
  auto m = make_node(cudaGraphNodeTypeEventRecord, record_work(e));
  m->event = e;
  return add_built(n, g, deps, ndeps, std::move(m));
}
cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                      cudaEvent_t e) {
  if (e == nullptr) return ret(cudaErrorInvalidValue);
  auto m = make_node(cudaGraphNodeTypeWaitEvent);  // work ran in issue order: nothing to wait for
  m->event = e;
  return add_built(n, g, deps, ndeps, std::move(m));
}
cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                       cudaGraph_t child) {
  if (child == nullptr) return ret(cudaErrorInvalidValue);
  auto m = make_node(cudaGraphNodeTypeGraph);
  {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    if (has_memory_nodes(child)) return ret(cudaErrorNotSupported);
    m->bodies.push_back(clone_graph(child, m.get()));
    m->body_ptrs.push_back(m->bodies.back().get());
  }
  cudaError_t r = add_built(n, g, deps, ndeps, std::move(m));
  return r;
}
cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                     cudaMemAllocNodeParams* p) {
  if (n == nullptr || g == nullptr || p == nullptr || p->bytesize == 0 || (ndeps && deps == nullptr) ||
      p->poolProps.allocType != cudaMemAllocationTypePinned || p->poolProps.location.type != cudaMemLocationTypeDevice)
    return ret(cudaErrorInvalidValue);
  if (p->poolProps.location.id != 0) return ret(cudaErrorInvalidDevice);
  std::shared_ptr<GraphAlloc> a;
  cudaError_t r = graph_alloc_create(p->bytesize, a);
  if (r != cudaSuccess) return r;
  auto m = make_node(cudaGraphNodeTypeMemAlloc);
  m->alloc = a;
  m->pool = p->poolProps;
  r = add_built(n, g, deps, ndeps, std::move(m));
  if (r == cudaSuccess) p->dptr = a->ptr;
  return r;
}
cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t n, cudaMemAllocNodeParams* p) {
  if (p == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, cudaGraphNodeTypeMemAlloc)) return ret(cudaErrorInvalidValue);
  *p = cudaMemAllocNodeParams{};
  p->poolProps = n->pool;
  p->bytesize = n->alloc->bytes;
  p->dptr = n->alloc->ptr;
  return cudaSuccess;
}
cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                    void* dptr) {
  if (!find_graph_alloc(dptr)) return ret(cudaErrorInvalidValue);  // only graph allocations
  auto m = make_node(cudaGraphNodeTypeMemFree);
  m->dptr = dptr;
  return add_built(n, g, deps, ndeps, std::move(m));
}
cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t n, void* dptr_out) {
  if (dptr_out == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, cudaGraphNodeTypeMemFree)) return ret(cudaErrorInvalidValue);
  *static_cast<void**>(dptr_out) = n->dptr;
  return cudaSuccess;
}
cudaError_t cudaDeviceGraphMemTrim(int device) {
  if (device != 0) return ret(cudaErrorInvalidDevice);
  std::lock_guard<std::mutex> lk(g_gmem_mutex);
  g_gmem.reserved = g_gmem.live;  // what no live allocation uses goes back
  return cudaSuccess;
}
cudaError_t cudaDeviceGetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value) {
  if (device != 0) return ret(cudaErrorInvalidDevice);
  if (value == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_gmem_mutex);
  unsigned long long v;
  switch (attr) {
    case cudaGraphMemAttrUsedMemCurrent: v = g_gmem.reserved; break;  // all of it is mapped to graph allocations
    case cudaGraphMemAttrUsedMemHigh: v = g_gmem.used_high; break;
    case cudaGraphMemAttrReservedMemCurrent: v = g_gmem.reserved; break;
    case cudaGraphMemAttrReservedMemHigh: v = g_gmem.reserved_high; break;
    default: return ret(cudaErrorInvalidValue);
  }
  *static_cast<unsigned long long*>(value) = v;
  return cudaSuccess;
}
cudaError_t cudaDeviceSetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value) {
  if (device != 0) return ret(cudaErrorInvalidDevice);
  // Only the high watermarks, and only back to zero (they restart from what is held now).
  if (value == nullptr || *static_cast<unsigned long long*>(value) != 0) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_gmem_mutex);
  if (attr == cudaGraphMemAttrUsedMemHigh) g_gmem.used_high = g_gmem.reserved;
  else if (attr == cudaGraphMemAttrReservedMemHigh) g_gmem.reserved_high = g_gmem.reserved;
  else return ret(cudaErrorInvalidValue);
  return cudaSuccess;
}
cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle* handle, cudaGraph_t g,
                                             unsigned int defaultLaunchValue, unsigned int flags) {
  if (handle == nullptr || g == nullptr || (flags & ~unsigned(cudaGraphCondAssignDefault)))
    return ret(cudaErrorInvalidValue);
  auto c = std::make_shared<GraphCond>();
  c->dflt = defaultLaunchValue;
  c->flags = flags;
  c->value.store((flags & cudaGraphCondAssignDefault) ? defaultLaunchValue : 0);
  {
    std::lock_guard<std::mutex> lk(g_cond_mutex);
    cond_handles().insert(c.get());
  }
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  g->conds.push_back(c);
  *handle = static_cast<cudaGraphConditionalHandle>(reinterpret_cast<uintptr_t>(c.get()));
  return cudaSuccess;
}
// A conditional node: its body graphs are made with it (phGraph_out), the handle is one made on
// its graph or on a graph it is a body of.
static cudaError_t add_conditional(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                                   cudaConditionalNodeParams* p) {
  if (g == nullptr) return ret(cudaErrorInvalidValue);
  const unsigned size = p->size;
  const bool size_ok = p->type == cudaGraphCondTypeIf       ? (size == 1 || size == 2)
                       : p->type == cudaGraphCondTypeWhile  ? size == 1
                       : p->type == cudaGraphCondTypeSwitch ? size >= 1
                                                            : false;
  if (!size_ok) return ret(cudaErrorInvalidValue);
  auto m = make_node(cudaGraphNodeTypeConditional);
  m->ctype = p->type;
  {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    for (const CUgraph_st* at = g; at != nullptr && !m->cond; at = at->owner ? at->owner->graph : nullptr)
      for (auto& c : at->conds)
        if (reinterpret_cast<uintptr_t>(c.get()) == p->handle) m->cond = c;
  }
  if (!m->cond) return ret(cudaErrorInvalidValue);
  for (unsigned i = 0; i < size; ++i) {
    auto b = std::make_unique<CUgraph_st>();
    b->owner = m.get();
    m->body_ptrs.push_back(b.get());
    m->bodies.push_back(std::move(b));
  }
  cudaGraph_t* bodies = m->body_ptrs.data();
  cudaError_t r = add_built(n, g, deps, ndeps, std::move(m));
  if (r == cudaSuccess) p->phGraph_out = bodies;
  return r;
}
cudaError_t cudaGraphAddNode(cudaGraphNode_t* n, cudaGraph_t g, const cudaGraphNode_t* deps, size_t ndeps,
                             cudaGraphNodeParams* p) {
  if (p == nullptr) return ret(cudaErrorInvalidValue);
  switch (p->type) {
    case cudaGraphNodeTypeKernel: {
      const cudaKernelNodeParams k{p->kernel.func, p->kernel.gridDim, p->kernel.blockDim, p->kernel.sharedMemBytes,
                                   p->kernel.kernelParams, p->kernel.extra};
      return cudaGraphAddKernelNode(n, g, deps, ndeps, &k);
    }
    case cudaGraphNodeTypeMemcpy: return cudaGraphAddMemcpyNode(n, g, deps, ndeps, &p->memcpy.copyParams);
    case cudaGraphNodeTypeMemset: {
      const cudaMemsetParams m{p->memset.dst, p->memset.pitch, p->memset.value, p->memset.elementSize,
                               p->memset.width, p->memset.height};
      return cudaGraphAddMemsetNode(n, g, deps, ndeps, &m);
    }
    case cudaGraphNodeTypeHost: {
      const cudaHostNodeParams h{p->host.fn, p->host.userData};
      return cudaGraphAddHostNode(n, g, deps, ndeps, &h);
    }
    case cudaGraphNodeTypeGraph: return cudaGraphAddChildGraphNode(n, g, deps, ndeps, p->graph.graph);
    case cudaGraphNodeTypeEmpty: return cudaGraphAddEmptyNode(n, g, deps, ndeps);
    case cudaGraphNodeTypeWaitEvent: return cudaGraphAddEventWaitNode(n, g, deps, ndeps, p->eventWait.event);
    case cudaGraphNodeTypeEventRecord: return cudaGraphAddEventRecordNode(n, g, deps, ndeps, p->eventRecord.event);
    case cudaGraphNodeTypeMemAlloc: {
      cudaMemAllocNodeParams a{p->alloc.poolProps, p->alloc.accessDescs, p->alloc.accessDescCount,
                               p->alloc.bytesize, nullptr};
      cudaError_t r = cudaGraphAddMemAllocNode(n, g, deps, ndeps, &a);
      p->alloc.dptr = a.dptr;
      return r;
    }
    case cudaGraphNodeTypeMemFree: return cudaGraphAddMemFreeNode(n, g, deps, ndeps, p->free.dptr);
    case cudaGraphNodeTypeConditional: return add_conditional(n, g, deps, ndeps, &p->conditional);
    default: return ret(cudaErrorInvalidValue);  // external semaphores: not in the CPU shim
  }
}
cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     size_t n) {
  if (g == nullptr || (n && (from == nullptr || to == nullptr))) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  for (size_t i = 0; i < n; ++i)
    if (!node_of(g, from[i]) || !node_of(g, to[i]) || from[i] == to[i]) return ret(cudaErrorInvalidValue);
  for (size_t i = 0; i < n; ++i) to[i]->deps.push_back(from[i]);
  return cudaSuccess;
}
cudaError_t cudaGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                        size_t n) {
  if (g == nullptr || (n && (from == nullptr || to == nullptr))) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  for (size_t i = 0; i < n; ++i)
    if (!node_of(g, from[i]) || !node_of(g, to[i]) ||
        std::find(to[i]->deps.begin(), to[i]->deps.end(), from[i]) == to[i]->deps.end())
      return ret(cudaErrorInvalidValue);
  for (size_t i = 0; i < n; ++i) {
    auto& d = to[i]->deps;
    d.erase(std::find(d.begin(), d.end(), from[i]));
  }
  return cudaSuccess;
}
cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* count) {
  if (g == nullptr || count == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  std::vector<cudaGraphNode_t> v;
  for (auto& n : g->nodes) v.push_back(n.get());
  list_out(v, nodes, count);
  return cudaSuccess;
}
cudaError_t cudaGraphGetRootNodes(cudaGraph_t g, cudaGraphNode_t* nodes, size_t* count) {
  if (g == nullptr || count == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  std::vector<cudaGraphNode_t> v;
  for (auto& n : g->nodes)
    if (n->deps.empty()) v.push_back(n.get());
  list_out(v, nodes, count);
  return cudaSuccess;
}
cudaError_t cudaGraphGetEdges(cudaGraph_t g, cudaGraphNode_t* from, cudaGraphNode_t* to, size_t* count) {
  if (g == nullptr || count == nullptr || ((from == nullptr) != (to == nullptr))) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  std::vector<cudaGraphNode_t> f, t;
  for (auto& n : g->nodes)
    for (auto* d : n->deps) {
      f.push_back(d);
      t.push_back(n.get());
    }
  size_t c = *count;
  list_out(f, from, &c);
  list_out(t, to, count);
  return cudaSuccess;
}
cudaError_t cudaGraphGetEdges(cudaGraph_t g, cudaGraphNode_t* from, cudaGraphNode_t* to, cudaGraphEdgeData* edges,
                              size_t* count) {
  cudaError_t r = cudaGraphGetEdges(g, from, to, count);
  if (r == cudaSuccess && edges && from)
    for (size_t i = 0; i < *count; ++i) edges[i] = cudaGraphEdgeData{};
  return r;
}
cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t n, cudaGraphNode_t* deps, size_t* count) {
  if (count == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!valid_node(n)) return ret(cudaErrorInvalidValue);
  list_out(n->deps, deps, count);
  return cudaSuccess;
}
cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t n, cudaGraphNode_t* deps, cudaGraphEdgeData* edges,
                                         size_t* count) {
  cudaError_t r = cudaGraphNodeGetDependencies(n, deps, count);
  if (r == cudaSuccess && edges && deps)
    for (size_t i = 0; i < *count; ++i) edges[i] = cudaGraphEdgeData{};
  return r;
}
cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t n, cudaGraphNode_t* nodes, size_t* count) {
  if (count == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!valid_node(n)) return ret(cudaErrorInvalidValue);
  std::vector<cudaGraphNode_t> v;
  for (auto& m : n->graph->nodes)
    if (std::find(m->deps.begin(), m->deps.end(), n) != m->deps.end()) v.push_back(m.get());
  list_out(v, nodes, count);
  return cudaSuccess;
}
cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t n, cudaGraphNode_t* nodes, cudaGraphEdgeData* edges,
                                           size_t* count) {
  cudaError_t r = cudaGraphNodeGetDependentNodes(n, nodes, count);
  if (r == cudaSuccess && edges && nodes)
    for (size_t i = 0; i < *count; ++i) edges[i] = cudaGraphEdgeData{};
  return r;
}
cudaError_t cudaGraphNodeGetType(cudaGraphNode_t n, cudaGraphNodeType* type) {
  if (type == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!valid_node(n)) return ret(cudaErrorInvalidValue);
  *type = n->type;
  return cudaSuccess;
}
cudaError_t cudaGraphDestroyNode(cudaGraphNode_t n) {
  std::unique_ptr<CUgraphNode_st> gone;  // released after the lock
  {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    if (!valid_node(n)) return ret(cudaErrorInvalidValue);
    CUgraph_st* g = n->graph;
    for (auto& m : g->nodes) m->deps.erase(std::remove(m->deps.begin(), m->deps.end(), n), m->deps.end());
    g->tail.erase(std::remove(g->tail.begin(), g->tail.end(), n), g->tail.end());
    live_nodes().erase(n);
    for (auto& b : n->bodies) forget_nodes(b.get());
    for (auto it = g->nodes.begin(); it != g->nodes.end(); ++it)
      if (it->get() == n) {
        gone = std::move(*it);
        g->nodes.erase(it);
        break;
      }
  }
  return cudaSuccess;
}
cudaError_t cudaGraphClone(cudaGraph_t* clone, cudaGraph_t original) {
  if (clone == nullptr || original == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (has_memory_nodes(original)) return ret(cudaErrorNotSupported);  // as CUDA: graph allocations are not cloned
  *clone = clone_graph(original, nullptr).release();
  return cudaSuccess;
}
cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t* n, cudaGraphNode_t original, cudaGraph_t clone) {
  if (n == nullptr || clone == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  for (auto& m : clone->nodes)
    if (m->origin == original) {
      *n = m.get();
      return cudaSuccess;
    }
  return ret(cudaErrorInvalidValue);
}
cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t n, cudaGraph_t* child) {
  if (child == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, cudaGraphNodeTypeGraph) || n->bodies.empty()) return ret(cudaErrorInvalidValue);
  *child = n->bodies[0].get();
  return cudaSuccess;
}
// ---- node parameters
cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t n, cudaKernelNodeParams* p) {
  if (p == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, cudaGraphNodeTypeKernel)) return ret(cudaErrorInvalidValue);
  if (n->captured) captured_params("cudaGraphKernelNodeGetParams");
  *p = n->kernel;
  p->kernelParams = n->work ? n->work->args() : nullptr;
  return cudaSuccess;
}
cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t n, const cudaKernelNodeParams* p) {
  std::shared_ptr<_Closure> work;
  cudaError_t r = bind_kernel(p, work);
  if (r != cudaSuccess) return ret(r);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, cudaGraphNodeTypeKernel)) return ret(cudaErrorInvalidValue);
  n->work = std::move(work);
  n->kernel = kernel_record(*p);
  n->captured = false;
  return cudaSuccess;
}
cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t n, cudaMemcpy3DParms* p) {
  if (p == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, cudaGraphNodeTypeMemcpy)) return ret(cudaErrorInvalidValue);
  if (n->captured) captured_params("cudaGraphMemcpyNodeGetParams");
  *p = n->copy;
  return cudaSuccess;
}
cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t n, const cudaMemcpy3DParms* p) {
  if (!copy_ok(p)) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, cudaGraphNodeTypeMemcpy)) return ret(cudaErrorInvalidValue);
  n->work = copy_work(*p);
  n->copy = *p;
  n->captured = false;
  return cudaSuccess;
}
cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t n, void* dst, const void* src, size_t count,
                                           cudaMemcpyKind kind) {
  const cudaMemcpy3DParms p = copy_1d(dst, src, count, kind);
  return cudaGraphMemcpyNodeSetParams(n, &p);
}
cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t n, cudaMemsetParams* p) {
  if (p == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, cudaGraphNodeTypeMemset)) return ret(cudaErrorInvalidValue);
  if (n->captured) captured_params("cudaGraphMemsetNodeGetParams");
  *p = n->fill;
  return cudaSuccess;
}
cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t n, const cudaMemsetParams* p) {
  if (!fill_ok(p)) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, cudaGraphNodeTypeMemset)) return ret(cudaErrorInvalidValue);
  n->work = fill_work(*p);
  n->fill = *p;
  n->captured = false;
  return cudaSuccess;
}
cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t n, cudaHostNodeParams* p) {
  if (p == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, cudaGraphNodeTypeHost)) return ret(cudaErrorInvalidValue);
  if (n->captured) captured_params("cudaGraphHostNodeGetParams");
  *p = n->host;
  return cudaSuccess;
}
cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t n, const cudaHostNodeParams* p) {
  if (p == nullptr || p->fn == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, cudaGraphNodeTypeHost)) return ret(cudaErrorInvalidValue);
  n->work = host_work(*p);
  n->host = *p;
  n->captured = false;
  return cudaSuccess;
}
static cudaError_t event_node(cudaGraphNode_t n, cudaGraphNodeType t, cudaEvent_t* get, cudaEvent_t set) {
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, t) || (get == nullptr && set == nullptr)) return ret(cudaErrorInvalidValue);
  if (get) *get = n->event;
  if (set) {
    n->event = set;
    if (t == cudaGraphNodeTypeEventRecord) n->work = record_work(set);
  }
  return cudaSuccess;
}
cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t n, cudaEvent_t* e) {
  return e ? event_node(n, cudaGraphNodeTypeEventRecord, e, nullptr) : ret(cudaErrorInvalidValue);
}
cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t n, cudaEvent_t e) {
  return e ? event_node(n, cudaGraphNodeTypeEventRecord, nullptr, e) : ret(cudaErrorInvalidValue);
}
cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t n, cudaEvent_t* e) {
  return e ? event_node(n, cudaGraphNodeTypeWaitEvent, e, nullptr) : ret(cudaErrorInvalidValue);
}
cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t n, cudaEvent_t e) {
  return e ? event_node(n, cudaGraphNodeTypeWaitEvent, nullptr, e) : ret(cudaErrorInvalidValue);
}
cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t n, cudaGraphNodeParams* p) {
  if (p == nullptr) return ret(cudaErrorInvalidValue);
  switch (p->type) {
    case cudaGraphNodeTypeKernel: {
      const cudaKernelNodeParams k{p->kernel.func, p->kernel.gridDim, p->kernel.blockDim, p->kernel.sharedMemBytes,
                                   p->kernel.kernelParams, p->kernel.extra};
      return cudaGraphKernelNodeSetParams(n, &k);
    }
    case cudaGraphNodeTypeMemcpy: return cudaGraphMemcpyNodeSetParams(n, &p->memcpy.copyParams);
    case cudaGraphNodeTypeMemset: {
      const cudaMemsetParams m{p->memset.dst, p->memset.pitch, p->memset.value, p->memset.elementSize,
                               p->memset.width, p->memset.height};
      return cudaGraphMemsetNodeSetParams(n, &m);
    }
    case cudaGraphNodeTypeHost: {
      const cudaHostNodeParams h{p->host.fn, p->host.userData};
      return cudaGraphHostNodeSetParams(n, &h);
    }
    case cudaGraphNodeTypeEventRecord: return cudaGraphEventRecordNodeSetEvent(n, p->eventRecord.event);
    case cudaGraphNodeTypeWaitEvent: return cudaGraphEventWaitNodeSetEvent(n, p->eventWait.event);
    default: return ret(cudaErrorInvalidValue);
  }
}
cudaError_t cudaGraphKernelNodeSetAttribute(cudaGraphNode_t n, cudaKernelNodeAttrID attr,
                                            const cudaKernelNodeAttrValue* value) {
  if (value == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, cudaGraphNodeTypeKernel)) return ret(cudaErrorInvalidValue);
  n->attrs[(int)attr] = *value;
  return cudaSuccess;
}
cudaError_t cudaGraphKernelNodeGetAttribute(cudaGraphNode_t n, cudaKernelNodeAttrID attr,
                                            cudaKernelNodeAttrValue* value) {
  if (value == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(n, cudaGraphNodeTypeKernel)) return ret(cudaErrorInvalidValue);
  auto it = n->attrs.find((int)attr);
  if (it != n->attrs.end()) *value = it->second;
  else memset(value, 0, sizeof *value);
  return cudaSuccess;
}
cudaError_t cudaGraphKernelNodeCopyAttributes(cudaGraphNode_t dst, cudaGraphNode_t src) {
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  if (!node_is(dst, cudaGraphNodeTypeKernel) || !node_is(src, cudaGraphNodeTypeKernel))
    return ret(cudaErrorInvalidValue);
  dst->attrs = src->attrs;
  return cudaSuccess;
}
// Its nodes (by kind) and edges, body graphs as clusters.
static void dot_graph(FILE* f, const CUgraph_st* g, const std::string& prefix) {
  static const char* kinds[] = {"KERNEL", "MEMCPY", "MEMSET", "HOST", "GRAPH", "EMPTY", "WAIT_EVENT",
                                "EVENT_RECORD", "EXT_SEMAS_SIGNAL", "EXT_SEMAS_WAIT", "MEM_ALLOC", "MEM_FREE",
                                "BATCH_MEM_OP", "CONDITIONAL"};
  std::unordered_map<const CUgraphNode_st*, size_t> index;
  for (size_t i = 0; i < g->nodes.size(); ++i) index[g->nodes[i].get()] = i;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const CUgraphNode_st* n = g->nodes[i].get();
    const std::string id = prefix + std::to_string(i);
    fprintf(f, "  \"%s\" [label=\"%s\"];\n", id.c_str(), n->type < 14 ? kinds[n->type] : "NODE");
    for (auto* d : n->deps) fprintf(f, "  \"%s%zu\" -> \"%s\";\n", prefix.c_str(), index[d], id.c_str());
    for (size_t b = 0; b < n->bodies.size(); ++b) {
      const std::string sub = id + "_" + std::to_string(b) + "_";
      fprintf(f, "  subgraph \"cluster_%s\" {\n", sub.c_str());
      dot_graph(f, n->bodies[b].get(), sub);
      fprintf(f, "  }\n");
    }
  }
}
cudaError_t cudaGraphDebugDotPrint(cudaGraph_t g, const char* path, unsigned int) {
  if (g == nullptr || path == nullptr) return ret(cudaErrorInvalidValue);
  FILE* f = fopen(path, "w");
  if (f == nullptr) return ret(cudaErrorOperatingSystem);
  fprintf(f, "digraph cudaGraph {\n");
  {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    dot_graph(f, g, "n");
  }
  fprintf(f, "}\n");
  fclose(f);
  return cudaSuccess;
}
// ---- instantiated graphs
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long flags) {
  cudaGraphInstantiateParams p{};
  p.flags = flags;
  return cudaGraphInstantiateWithParams(e, g, &p);
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, cudaGraphNode_t* error_node, char* log,
                                 size_t log_size) {
  cudaGraphInstantiateParams p{};
  cudaError_t r = cudaGraphInstantiateWithParams(e, g, &p);
  if (error_node) *error_node = p.errNode_out;
  if (log && log_size) {
    const char* why = r == cudaSuccess ? ""
                      : p.result_out == cudaGraphInstantiateNodeOperationNotSupported
                          ? "a node of a kind a conditional body may not hold"
                          : "the graph's dependencies form a cycle or name no node of it";
    snprintf(log, log_size, "%s", why);
  }
  return r;
}
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long flags) {
  return cudaGraphInstantiate(e, g, flags);
}
cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t* e, cudaGraph_t g, cudaGraphInstantiateParams* params) {
  if (e == nullptr || g == nullptr || params == nullptr) return ret(cudaErrorInvalidValue);
  params->errNode_out = nullptr;
  params->result_out = cudaGraphInstantiateSuccess;
  std::shared_ptr<ExecBody> body;
  const CUgraphNode_st* bad = nullptr;
  cudaError_t r;
  {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    r = build(g, false, body, &bad);
  }
  if (r != cudaSuccess) {
    params->errNode_out = const_cast<CUgraphNode_st*>(bad);
    params->result_out = r == cudaErrorNotSupported ? cudaGraphInstantiateNodeOperationNotSupported
                                                    : cudaGraphInstantiateInvalidStructure;
    return ret(r);
  }
  auto* x = new CUgraphExec_st();
  x->body = std::move(body);
  x->flags = params->flags;
  *e = x;
  return cudaSuccess;
}
cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t e, unsigned long long* flags) {
  if (e == nullptr || flags == nullptr) return ret(cudaErrorInvalidValue);
  *flags = e->flags;
  return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s) {
  if (e == nullptr) return ret(cudaErrorInvalidValue);
  std::shared_ptr<ExecBody> body = e->body;
  if (capturing(s)) {  // a graph launched into a capture: a node of the capture runs it
    return capture(s, closure([body] { run_body(*body); }), cudaGraphNodeTypeGraph);
  }
  cudaError_t r = allocs_ready(*body, (e->flags & cudaGraphInstantiateFlagAutoFreeOnLaunch) != 0);
  if (r != cudaSuccess) return ret(r);
  run_body(*body);
  return (cudaError_t)g_sticky.load();
}
cudaError_t cudaGraphUpload(cudaGraphExec_t e, cudaStream_t) {
  return e ? cudaSuccess : ret(cudaErrorInvalidValue);
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) {
  delete e;
  return cudaSuccess;
}
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t e, cudaGraph_t g, cudaGraphExecUpdateResultInfo* info) {
  if (e == nullptr || g == nullptr || info == nullptr) return ret(cudaErrorInvalidValue);
  *info = cudaGraphExecUpdateResultInfo{cudaGraphExecUpdateSuccess, nullptr, nullptr};
  std::shared_ptr<ExecBody> nu;
  {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    info->result = same_shape(*e->body, g, info);
    if (info->result == cudaGraphExecUpdateSuccess) {
      const CUgraphNode_st* bad = nullptr;
      if (build(g, false, nu, &bad) != cudaSuccess) {
        info->result = cudaGraphExecUpdateErrorNotSupported;
        info->errorNode = const_cast<CUgraphNode_st*>(bad);
      }
    }
  }
  if (info->result != cudaGraphExecUpdateSuccess) return ret(cudaErrorGraphExecUpdateFailure);
  carry_keys(*nu, *e->body);
  e->body = std::move(nu);
  return cudaSuccess;
}
// The node's step in the instance, of kind t (under g_graph_mutex); nullptr if none.
static ExecStep* exec_step(cudaGraphExec_t e, cudaGraphNode_t n, cudaGraphNodeType t) {
  if (e == nullptr || n == nullptr) return nullptr;
  ExecStep* st = find_step(*e->body, n);
  return st && st->type == t ? st : nullptr;
}
cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n, const cudaKernelNodeParams* p) {
  std::shared_ptr<_Closure> work;
  cudaError_t r = bind_kernel(p, work);
  if (r != cudaSuccess) return ret(r);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  ExecStep* st = exec_step(e, n, cudaGraphNodeTypeKernel);
  if (!st) return ret(cudaErrorInvalidValue);
  st->work = std::move(work);
  return cudaSuccess;
}
cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n, const cudaMemcpy3DParms* p) {
  if (!copy_ok(p)) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  ExecStep* st = exec_step(e, n, cudaGraphNodeTypeMemcpy);
  if (!st) return ret(cudaErrorInvalidValue);
  st->work = copy_work(*p);
  return cudaSuccess;
}
cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t e, cudaGraphNode_t n, void* dst, const void* src,
                                               size_t count, cudaMemcpyKind kind) {
  const cudaMemcpy3DParms p = copy_1d(dst, src, count, kind);
  return cudaGraphExecMemcpyNodeSetParams(e, n, &p);
}
cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n, const cudaMemsetParams* p) {
  if (!fill_ok(p)) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  ExecStep* st = exec_step(e, n, cudaGraphNodeTypeMemset);
  if (!st) return ret(cudaErrorInvalidValue);
  st->work = fill_work(*p);
  return cudaSuccess;
}
cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n, const cudaHostNodeParams* p) {
  if (p == nullptr || p->fn == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  ExecStep* st = exec_step(e, n, cudaGraphNodeTypeHost);
  if (!st) return ret(cudaErrorInvalidValue);
  st->work = host_work(*p);
  return cudaSuccess;
}
cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t e, cudaGraphNode_t n, cudaEvent_t ev) {
  if (ev == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  ExecStep* st = exec_step(e, n, cudaGraphNodeTypeEventRecord);
  if (!st) return ret(cudaErrorInvalidValue);
  st->work = record_work(ev);
  return cudaSuccess;
}
cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t e, cudaGraphNode_t n, cudaEvent_t ev) {
  if (ev == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  return exec_step(e, n, cudaGraphNodeTypeWaitEvent) ? cudaSuccess : ret(cudaErrorInvalidValue);
}
cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t n, cudaGraphNodeParams* p) {
  if (p == nullptr) return ret(cudaErrorInvalidValue);
  switch (p->type) {
    case cudaGraphNodeTypeKernel: {
      const cudaKernelNodeParams k{p->kernel.func, p->kernel.gridDim, p->kernel.blockDim, p->kernel.sharedMemBytes,
                                   p->kernel.kernelParams, p->kernel.extra};
      return cudaGraphExecKernelNodeSetParams(e, n, &k);
    }
    case cudaGraphNodeTypeMemcpy: return cudaGraphExecMemcpyNodeSetParams(e, n, &p->memcpy.copyParams);
    case cudaGraphNodeTypeMemset: {
      const cudaMemsetParams m{p->memset.dst, p->memset.pitch, p->memset.value, p->memset.elementSize,
                               p->memset.width, p->memset.height};
      return cudaGraphExecMemsetNodeSetParams(e, n, &m);
    }
    case cudaGraphNodeTypeHost: {
      const cudaHostNodeParams h{p->host.fn, p->host.userData};
      return cudaGraphExecHostNodeSetParams(e, n, &h);
    }
    case cudaGraphNodeTypeEventRecord: return cudaGraphExecEventRecordNodeSetEvent(e, n, p->eventRecord.event);
    case cudaGraphNodeTypeWaitEvent: return cudaGraphExecEventWaitNodeSetEvent(e, n, p->eventWait.event);
    default: return ret(cudaErrorInvalidValue);
  }
}
// Only kernel, memcpy and memset nodes can be disabled (CUDA 11.6+).
cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t e, cudaGraphNode_t n, unsigned int enabled) {
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  ExecStep* st = e && n ? find_step(*e->body, n) : nullptr;
  if (!st || (st->type != cudaGraphNodeTypeKernel && st->type != cudaGraphNodeTypeMemcpy &&
              st->type != cudaGraphNodeTypeMemset))
    return ret(cudaErrorInvalidValue);
  st->enabled = enabled != 0;
  return cudaSuccess;
}
cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t e, cudaGraphNode_t n, unsigned int* enabled) {
  if (enabled == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  ExecStep* st = e && n ? find_step(*e->body, n) : nullptr;
  if (!st || (st->type != cudaGraphNodeTypeKernel && st->type != cudaGraphNodeTypeMemcpy &&
              st->type != cudaGraphNodeTypeMemset))
    return ret(cudaErrorInvalidValue);
  *enabled = st->enabled ? 1 : 0;
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  std::lock_guard<std::mutex> lk(g_err_mutex);
  if (g_sticky.load() != cudaSuccess) return (cudaError_t)g_sticky.load();
  cudaError_t e = g_last_error;
  g_last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() {
  std::lock_guard<std::mutex> lk(g_err_mutex);
  if (g_sticky.load() != cudaSuccess) return (cudaError_t)g_sticky.load();
  return g_last_error;
}

const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
#define N(x) \
  case x: return #x;
    N(cudaSuccess) N(cudaErrorInvalidValue) N(cudaErrorMemoryAllocation) N(cudaErrorInitializationError)
    N(cudaErrorCudartUnloading) N(cudaErrorProfilerDisabled) N(cudaErrorProfilerNotInitialized)
    N(cudaErrorProfilerAlreadyStarted) N(cudaErrorProfilerAlreadyStopped) N(cudaErrorInvalidConfiguration)
    N(cudaErrorInvalidPitchValue) N(cudaErrorInvalidSymbol) N(cudaErrorInvalidHostPointer)
    N(cudaErrorInvalidDevicePointer) N(cudaErrorInvalidTexture) N(cudaErrorInvalidTextureBinding)
    N(cudaErrorInvalidChannelDescriptor) N(cudaErrorInvalidMemcpyDirection) N(cudaErrorAddressOfConstant)
    N(cudaErrorTextureFetchFailed) N(cudaErrorTextureNotBound) N(cudaErrorSynchronizationError)
    N(cudaErrorInvalidFilterSetting) N(cudaErrorInvalidNormSetting) N(cudaErrorMixedDeviceExecution)
    N(cudaErrorNotYetImplemented) N(cudaErrorMemoryValueTooLarge) N(cudaErrorStubLibrary)
    N(cudaErrorInsufficientDriver) N(cudaErrorCallRequiresNewerDriver) N(cudaErrorInvalidSurface)
    N(cudaErrorDuplicateVariableName) N(cudaErrorDuplicateTextureName) N(cudaErrorDuplicateSurfaceName)
    N(cudaErrorDevicesUnavailable) N(cudaErrorIncompatibleDriverContext) N(cudaErrorMissingConfiguration)
    N(cudaErrorPriorLaunchFailure) N(cudaErrorLaunchMaxDepthExceeded) N(cudaErrorLaunchFileScopedTex)
    N(cudaErrorLaunchFileScopedSurf) N(cudaErrorSyncDepthExceeded) N(cudaErrorLaunchPendingCountExceeded)
    N(cudaErrorInvalidDeviceFunction) N(cudaErrorNoDevice) N(cudaErrorInvalidDevice)
    N(cudaErrorDeviceNotLicensed) N(cudaErrorSoftwareValidityNotEstablished) N(cudaErrorStartupFailure)
    N(cudaErrorInvalidKernelImage) N(cudaErrorDeviceUninitialized) N(cudaErrorMapBufferObjectFailed)
    N(cudaErrorUnmapBufferObjectFailed) N(cudaErrorArrayIsMapped) N(cudaErrorAlreadyMapped)
    N(cudaErrorNoKernelImageForDevice) N(cudaErrorAlreadyAcquired) N(cudaErrorNotMapped)
    N(cudaErrorNotMappedAsArray) N(cudaErrorNotMappedAsPointer) N(cudaErrorECCUncorrectable)
    N(cudaErrorUnsupportedLimit) N(cudaErrorDeviceAlreadyInUse) N(cudaErrorPeerAccessUnsupported)
    N(cudaErrorInvalidPtx) N(cudaErrorInvalidGraphicsContext) N(cudaErrorNvlinkUncorrectable)
    N(cudaErrorJitCompilerNotFound) N(cudaErrorUnsupportedPtxVersion) N(cudaErrorJitCompilationDisabled)
    N(cudaErrorUnsupportedExecAffinity) N(cudaErrorUnsupportedDevSideSync) N(cudaErrorContained)
    N(cudaErrorInvalidSource) N(cudaErrorFileNotFound) N(cudaErrorSharedObjectSymbolNotFound)
    N(cudaErrorSharedObjectInitFailed) N(cudaErrorOperatingSystem) N(cudaErrorInvalidResourceHandle)
    N(cudaErrorIllegalState) N(cudaErrorLossyQuery) N(cudaErrorSymbolNotFound) N(cudaErrorNotReady)
    N(cudaErrorIllegalAddress) N(cudaErrorLaunchOutOfResources) N(cudaErrorLaunchTimeout)
    N(cudaErrorLaunchIncompatibleTexturing) N(cudaErrorPeerAccessAlreadyEnabled)
    N(cudaErrorPeerAccessNotEnabled) N(cudaErrorSetOnActiveProcess) N(cudaErrorContextIsDestroyed)
    N(cudaErrorAssert) N(cudaErrorTooManyPeers) N(cudaErrorHostMemoryAlreadyRegistered)
    N(cudaErrorHostMemoryNotRegistered) N(cudaErrorHardwareStackError) N(cudaErrorIllegalInstruction)
    N(cudaErrorMisalignedAddress) N(cudaErrorInvalidAddressSpace) N(cudaErrorInvalidPc)
    N(cudaErrorLaunchFailure) N(cudaErrorCooperativeLaunchTooLarge) N(cudaErrorTensorMemoryLeak)
    N(cudaErrorNotPermitted) N(cudaErrorNotSupported) N(cudaErrorSystemNotReady)
    N(cudaErrorSystemDriverMismatch) N(cudaErrorCompatNotSupportedOnDevice) N(cudaErrorMpsConnectionFailed)
    N(cudaErrorMpsRpcFailure) N(cudaErrorMpsServerNotReady) N(cudaErrorMpsMaxClientsReached)
    N(cudaErrorMpsMaxConnectionsReached) N(cudaErrorMpsClientTerminated) N(cudaErrorCdpNotSupported)
    N(cudaErrorCdpVersionMismatch) N(cudaErrorStreamCaptureUnsupported) N(cudaErrorStreamCaptureInvalidated)
    N(cudaErrorStreamCaptureMerge) N(cudaErrorStreamCaptureUnmatched) N(cudaErrorStreamCaptureUnjoined)
    N(cudaErrorStreamCaptureIsolation) N(cudaErrorStreamCaptureImplicit) N(cudaErrorCapturedEvent)
    N(cudaErrorStreamCaptureWrongThread) N(cudaErrorTimeout) N(cudaErrorGraphExecUpdateFailure)
    N(cudaErrorExternalDevice) N(cudaErrorInvalidClusterSize) N(cudaErrorFunctionNotLoaded)
    N(cudaErrorInvalidResourceType) N(cudaErrorInvalidResourceConfiguration) N(cudaErrorUnknown)
    N(cudaErrorApiFailureBase)
#undef N
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorAssert: return "device-side assert triggered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorCooperativeLaunchTooLarge:
      return "too many blocks in cooperative launch";
    case cudaErrorInvalidPitchValue: return "invalid pitch argument";
    case cudaErrorInvalidHostPointer: return "invalid host pointer";
    case cudaErrorInvalidResourceType: return "invalid resource type";
    case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
    case cudaErrorPeerAccessUnsupported: return "peer access is not supported between these two devices";
    case cudaErrorPeerAccessAlreadyEnabled: return "peer access is already enabled";
    case cudaErrorPeerAccessNotEnabled: return "peer access has not been enabled";
    case cudaErrorHostMemoryAlreadyRegistered: return "part or all of the requested memory range is already mapped";
    case cudaErrorHostMemoryNotRegistered: return "pointer does not correspond to a registered memory region";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case cudaErrorStreamCaptureUnmatched: return "capture was not ended in the same stream as it began";
    case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
    case cudaErrorInvalidKernelImage: return "device kernel image is invalid";
    case cudaErrorNoKernelImageForDevice: return "no kernel image is available for execution on the device";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorUnsupportedLimit: return "limit is not supported on this architecture";
    case cudaErrorMissingConfiguration: return "__global__ function call is not configured";
    default: return "unknown error";
  }
}

cudaError_t cudaMalloc(void** p, size_t n) { return alloc_into(device_allocs(), p, n, true); }
static cudaError_t mapped(cudaError_t r, void* p, size_t n) {
  if (r == cudaSuccess && p && n) {
    std::lock_guard<std::mutex> lk(g_alloc_mutex);
    mapped_ranges()[reinterpret_cast<uintptr_t>(p)] = n;
  }
  return r;
}
static void unmapped(void* p) {
  std::lock_guard<std::mutex> lk(g_alloc_mutex);
  mapped_ranges().erase(reinterpret_cast<uintptr_t>(p));
}
cudaError_t cudaMallocManaged(void** p, size_t n, unsigned int) {
  cudaError_t r = alloc_into(device_allocs(), p, n);  // before *p is read
  return mapped(r, p ? *p : nullptr, n);
}
cudaError_t cudashim_pool_alloc(void** p, size_t n, CUmemPoolHandle_st* pool);
void cudashim_pool_free(void* p);
static CUmemPoolHandle_st* current_pool();
cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t s) {
  if (capturing(s)) return graph_capture_malloc(s, p, n);  // a graph allocation node
  return cudashim_pool_alloc(p, n, current_pool());
}
// cudaHostGetFlags: the flags each page-locked allocation was made with.
static std::unordered_map<void*, unsigned>& host_alloc_flags() {
  static auto* m = new std::unordered_map<void*, unsigned>;
  return *m;
}
cudaError_t cudaMallocHost(void** p, size_t n) { return cudaHostAlloc(p, n, cudaHostAllocDefault); }
cudaError_t cudaHostAlloc(void** p, size_t n, unsigned int flags) {
  cudaError_t r = alloc_into(host_allocs(), p, n);  // before *p is read
  if (r == cudaSuccess && *p) {
    std::lock_guard<std::mutex> lk(g_alloc_mutex);
    host_alloc_flags()[*p] = flags;
  }
  return mapped(r, p ? *p : nullptr, n);
}
cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t width, size_t height) {
  if (!pitch) return ret(cudaErrorInvalidValue);
  *pitch = (width + 255) & ~size_t(255);
  return alloc_into(device_allocs(), p, *pitch * height, true);
}
cudaError_t cudaMalloc3D(cudaPitchedPtr* p, cudaExtent e) {
  size_t pitch = (e.width + 255) & ~size_t(255);
  void* m = nullptr;
  cudaError_t r = alloc_into(device_allocs(), &m, pitch * e.height * e.depth, true);
  *p = cudaPitchedPtr{m, pitch, e.width, e.height};
  return r;
}
cudaError_t cudaFree(void* p) {
  cudaError_t graph_err;
  if (graph_alloc_release(p, &graph_err)) return graph_err == cudaSuccess ? graph_err : ret(graph_err);
  unmapped(p);
  cudashim_pool_free(p);
  return free_from(device_allocs(), p);
}
cudaError_t cudaFreeAsync(void* p, cudaStream_t s) {
  if (capturing(s) && graph_capture_free(s, p)) return cudaSuccess;  // a graph free node
  cudaError_t graph_err;
  if (graph_alloc_release(p, &graph_err)) return graph_err == cudaSuccess ? graph_err : ret(graph_err);
  cudashim_pool_free(p);
  return free_from(device_allocs(), p);
}
cudaError_t cudaFreeHost(void* p) {
  unmapped(p);
  {
    std::lock_guard<std::mutex> lk(g_alloc_mutex);
    host_alloc_flags().erase(p);
  }
  return free_from(host_allocs(), p);
}
cudaError_t cudaHostRegister(void* p, size_t n, unsigned int) { return mapped(cudaSuccess, p, n); }
cudaError_t cudaHostUnregister(void* p) { unmapped(p); return cudaSuccess; }
cudaError_t cudaHostGetDevicePointer(void** d, void* h, unsigned int) {
  *d = h;
  return cudaSuccess;
}
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p) {
  std::lock_guard<std::mutex> lk(g_alloc_mutex);
  void* q = const_cast<void*>(p);
  a->device = 0;
  a->devicePointer = q;
  a->hostPointer = q;
  a->type = device_allocs().count(q) ? cudaMemoryTypeDevice
            : host_allocs().count(q) ? cudaMemoryTypeHost
                                     : cudaMemoryTypeUnregistered;
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  RunSpan span(RunSpan::Copies);
  if (g_sticky.load() != cudaSuccess) return (cudaError_t)g_sticky.load();
  if (n == 0) return cudaSuccess;
  if (!dst || !src) return ret(cudaErrorInvalidValue);
  if ((int)kind < 0 || (int)kind > 4) return ret(cudaErrorInvalidMemcpyDirection);
  if (kind == cudaMemcpyDefault) {
    bool from_device = is_device_memory(src), to_device = is_device_memory(dst);
    kind = from_device == to_device ? (from_device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToHost)
           : to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  }
  if (!device_span_ok(dst, n) || !device_span_ok(src, n)) return ret(cudaErrorInvalidValue);
  if (kind == cudaMemcpyHostToDevice) note_upload_impl(src, n);
  DeviceRangeWindow window(dst, n, src, n);
  memmove(dst, src, n);
  // Memory the host reads in place (managed) gets the second draw only while kernels run
  // (launch_memory): a copy into it must not hand the host the device's inputs.
  if (kind == cudaMemcpyHostToDevice && !is_mapped(dst)) kernel_input_upload(src, dst, n);
  else if (kind == cudaMemcpyDeviceToHost) kernel_input_download(dst, n);
  return cudaSuccess;
}
namespace cudashim {
void note_upload(const void* src, size_t n) { note_upload_impl(src, n); }
bool uploads_noted() { return no_launch() || log_uploads(); }
void symbol_upload(const void* src, void* dst, size_t n) { kernel_input_upload(src, dst, n); }
void symbol_download(void* dst, size_t n) { kernel_input_download(dst, n); }
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s) {
  if (capturing(s)) {
    return capture(s, new _Closure_of<std::function<void()>>([=] { cudaMemcpy(dst, src, n, kind); }), cudaGraphNodeTypeMemcpy);
  }
  return cudaMemcpy(dst, src, n, kind);
}
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind) {
  RunSpan span(RunSpan::Copies);
  if (width > dpitch || width > spitch) return ret(cudaErrorInvalidPitchValue);
  // One window for all rows.
  DeviceRangeWindow window(dst, height ? (height - 1) * dpitch + width : 0, src, height ? (height - 1) * spitch + width : 0);
  for (size_t r = 0; r < height; ++r) {
    cudaError_t e = cudaMemcpy(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width, kind);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t s) {
  if (capturing(s)) {
    return capture(s, new _Closure_of<std::function<void()>>(
                   [=] { cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind); }), cudaGraphNodeTypeMemcpy);
  }
  return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}
cudaError_t cudaMemcpyPeer(void* dst, int, const void* src, int, size_t n) {
  return cudaMemcpy(dst, src, n, cudaMemcpyDeviceToDevice);
}
cudaError_t cudaMemset(void* p, int v, size_t n) {
  RunSpan span(RunSpan::Copies);
  if (n == 0) return cudaSuccess;
  if (!p || !device_span_ok(p, n)) return ret(cudaErrorInvalidValue);
  DeviceRangeWindow window(p, n);
  memset(p, v, n);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t s) {
  if (capturing(s)) {
    return capture(s, new _Closure_of<std::function<void()>>([=] { cudaMemset(p, v, n); }), cudaGraphNodeTypeMemset);
  }
  return cudaMemset(p, v, n);
}
cudaError_t cudaMemset2D(void* p, size_t pitch, int v, size_t width, size_t height) {
  RunSpan span(RunSpan::Copies);
  if (width > pitch) return ret(cudaErrorInvalidValue);
  if (height && !device_span_ok(p, (height - 1) * pitch + width)) return ret(cudaErrorInvalidValue);
  DeviceRangeWindow window(p, height ? (height - 1) * pitch + width : 0);
  for (size_t r = 0; r < height; ++r) memset(static_cast<char*>(p) + r * pitch, v, width);
  return cudaSuccess;
}
cudaError_t cudaMemPrefetchAsync(const void*, size_t, int, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaMemAdvise(const void*, size_t, cudaMemoryAdvise, int) { return cudaSuccess; }
cudaError_t cudaMemGetInfo(size_t* f, size_t* t) {
  size_t total = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
  size_t avail = (size_t)sysconf(_SC_AVPHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
  if (f) *f = avail;
  if (t) *t = total;
  return cudaSuccess;
}
// Launch errors are returned by cudaGetLastError, not by a later synchronisation; a device
// assert (sticky) is returned by every synchronising call.
// Waiting for the device while a capture is under way is refused on a GPU (the capture's work
// never runs, so there is nothing to wait for) and invalidates every capture.
cudaError_t cudaDeviceSynchronize() {
  {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    if (!active_captures().empty()) {
      for (const CUgraph_st* g : active_captures()) const_cast<CUgraph_st*>(g)->invalidated = true;
      return ret(cudaErrorStreamCaptureUnsupported);
    }
  }
  return (cudaError_t)g_sticky.load();
}
cudaError_t cudaThreadSynchronize() { return cudaDeviceSynchronize(); }
cudaError_t cudaDeviceReset() { return cudaSuccess; }
cudaError_t cudaThreadExit() { return cudaSuccess; }
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : ret(cudaErrorInvalidDevice); }
cudaError_t cudaGetDevice(int* d) {
  *d = 0;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
static std::atomic<unsigned> g_device_flags{0};
cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  if (flags & ~0xffu) return ret(cudaErrorInvalidValue);
  g_device_flags.store(flags);
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int d) {
  if (d != 0) return ret(cudaErrorInvalidDevice);
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "cudashim CPU emulation");
  cudaMemGetInfo(nullptr, &p->totalGlobalMem);
  p->sharedMemPerBlock = 48 * 1024;
  p->sharedMemPerBlockOptin = 48 * 1024;
  p->sharedMemPerMultiprocessor = 164 * 1024;
  p->regsPerBlock = 65536;
  p->regsPerMultiprocessor = 65536;
  p->warpSize = 32;
  p->memPitch = SIZE_MAX;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  p->clockRate = (int)cudashim::kClockRateKHz;
  p->totalConstMem = 64 * 1024;
  p->major = 8;
  p->minor = 0;
  p->textureAlignment = 512;
  p->deviceOverlap = 1;
  p->multiProcessorCount = kEmulatedSMs;
  p->canMapHostMemory = 1;
  p->concurrentKernels = 1;
  p->asyncEngineCount = 2;
  p->unifiedAddressing = 1;
  p->memoryClockRate = 1215000;
  p->memoryBusWidth = 5120;
  p->l2CacheSize = 40 * 1024 * 1024;
  // An A100's persisting-L2 limits: samples that set an access-policy window check them first
  // (cuda-samples' simpleAttributes waived with 0). Windows and limits change no result here.
  p->persistingL2CacheMaxSize = 30 * 1024 * 1024;
  p->accessPolicyMaxWindowSize = 134213632;
  p->maxThreadsPerMultiProcessor = 2048;
  p->maxBlocksPerMultiProcessor = kBlocksPerSM;  // max_blocks_per_sm: cooperative launches
  p->managedMemory = 1;
  p->concurrentManagedAccess = 1;
  p->pageableMemoryAccess = 1;
  p->cooperativeLaunch = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerBlockOptin = kSmemPerBlockOptin;
  p->streamPrioritiesSupported = 1;
  p->computePreemptionSupported = 1;
  p->texturePitchAlignment = 32;
  p->surfaceAlignment = 512;
  p->maxTexture1D = 131072;
  p->maxTexture2D[0] = 131072;
  p->maxTexture2D[1] = 65536;
  p->maxTexture3D[0] = p->maxTexture3D[1] = p->maxTexture3D[2] = 16384;
  p->maxTexture1DLayered[0] = 32768;  // layered and cubemap arrays (texture_runtime.h)
  p->maxTexture1DLayered[1] = 2048;
  p->maxTexture2DLayered[0] = p->maxTexture2DLayered[1] = 32768;
  p->maxTexture2DLayered[2] = 2048;
  p->maxTextureCubemap = 32768;
  p->maxTextureCubemapLayered[0] = 32768;
  p->maxTextureCubemapLayered[1] = 2046;
  p->maxSurface1D = 32768;
  p->maxSurface2D[0] = 131072;
  p->maxSurface2D[1] = 65536;
  p->maxSurface3D[0] = p->maxSurface3D[1] = p->maxSurface3D[2] = 16384;
  p->maxSurface1DLayered[0] = 32768;
  p->maxSurface1DLayered[1] = 2048;
  p->maxSurface2DLayered[0] = p->maxSurface2DLayered[1] = 32768;
  p->maxSurface2DLayered[2] = 2048;
  p->maxSurfaceCubemap = 32768;
  p->maxSurfaceCubemapLayered[0] = 32768;
  p->maxSurfaceCubemapLayered[1] = 2046;
  p->hostNativeAtomicSupported = 1;  // one memory: host and device atomics are the same
  p->singleToDoublePrecisionPerfRatio = 2;
  p->canUseHostPointerForRegisteredMem = 1;
  p->pageableMemoryAccessUsesHostPageTables = 1;
  p->directManagedMemAccessFromHost = 1;
  p->hostRegisterSupported = 1;
  p->hostRegisterReadOnlySupported = 1;
  p->memoryPoolsSupported = 1;
  p->unifiedFunctionPointers = 1;
  p->deviceNumaId = -1;
  p->hostNumaId = -1;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int d) {
  cudaDeviceProp p;
  cudaError_t e = cudaGetDeviceProperties(&p, d);
  if (e != cudaSuccess) return e;
  switch (a) {
    case cudaDevAttrMaxThreadsPerBlock: *v = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *v = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *v = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *v = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *v = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *v = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *v = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *v = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = (int)p.sharedMemPerBlockOptin; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *v = (int)p.sharedMemPerMultiprocessor; break;
    case cudaDevAttrTotalConstantMemory: *v = (int)p.totalConstMem; break;
    case cudaDevAttrWarpSize: *v = 32; break;
    case cudaDevAttrMaxRegistersPerBlock: *v = p.regsPerBlock; break;
    case cudaDevAttrClockRate: *v = p.clockRate; break;
    case cudaDevAttrMultiProcessorCount: *v = p.multiProcessorCount; break;
    case cudaDevAttrMemoryClockRate: *v = p.memoryClockRate; break;
    case cudaDevAttrGlobalMemoryBusWidth: *v = p.memoryBusWidth; break;
    case cudaDevAttrL2CacheSize: *v = p.l2CacheSize; break;
    case cudaDevAttrMaxPersistingL2CacheSize: *v = p.persistingL2CacheMaxSize; break;
    case cudaDevAttrMaxAccessPolicyWindowSize: *v = p.accessPolicyMaxWindowSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *v = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrComputeCapabilityMajor: *v = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *v = p.minor; break;
    case cudaDevAttrConcurrentKernels: *v = 1; break;
    case cudaDevAttrCooperativeLaunch: *v = 1; break;
    case cudaDevAttrManagedMemory: *v = 1; break;
    case cudaDevAttrConcurrentManagedAccess: *v = 1; break;
    case cudaDevAttrMaxPitch: *v = INT_MAX; break;
    case cudaDevAttrTextureAlignment: *v = (int)p.textureAlignment; break;
    case cudaDevAttrTexturePitchAlignment: *v = (int)p.texturePitchAlignment; break;
    case cudaDevAttrSurfaceAlignment: *v = (int)p.surfaceAlignment; break;
    case cudaDevAttrGpuOverlap: *v = p.deviceOverlap; break;
    case cudaDevAttrCanMapHostMemory: *v = p.canMapHostMemory; break;
    case cudaDevAttrComputeMode: *v = cudaComputeModeDefault; break;
    case cudaDevAttrAsyncEngineCount: *v = p.asyncEngineCount; break;
    case cudaDevAttrUnifiedAddressing: *v = p.unifiedAddressing; break;
    case cudaDevAttrStreamPrioritiesSupported: *v = p.streamPrioritiesSupported; break;
    case cudaDevAttrGlobalL1CacheSupported: *v = p.globalL1CacheSupported; break;
    case cudaDevAttrLocalL1CacheSupported: *v = p.localL1CacheSupported; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *v = p.regsPerMultiprocessor; break;
    case cudaDevAttrPageableMemoryAccess: *v = p.pageableMemoryAccess; break;
    case cudaDevAttrComputePreemptionSupported: *v = p.computePreemptionSupported; break;
    case cudaDevAttrCanUseHostPointerForRegisteredMem: *v = p.canUseHostPointerForRegisteredMem; break;
    case cudaDevAttrHostNativeAtomicSupported: *v = p.hostNativeAtomicSupported; break;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio: *v = p.singleToDoublePrecisionPerfRatio; break;
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables: *v = p.pageableMemoryAccessUsesHostPageTables; break;
    case cudaDevAttrDirectManagedMemAccessFromHost: *v = p.directManagedMemAccessFromHost; break;
    case cudaDevAttrHostRegisterSupported: *v = p.hostRegisterSupported; break;
    case cudaDevAttrHostRegisterReadOnlySupported: *v = p.hostRegisterReadOnlySupported; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *v = p.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrMemoryPoolsSupported: *v = p.memoryPoolsSupported; break;
    case cudaDevAttrMaxTexture1DWidth: *v = p.maxTexture1D; break;
    case cudaDevAttrMaxTexture2DWidth: *v = p.maxTexture2D[0]; break;
    case cudaDevAttrMaxTexture2DHeight: *v = p.maxTexture2D[1]; break;
    case cudaDevAttrMaxTexture3DWidth: *v = p.maxTexture3D[0]; break;
    case cudaDevAttrMaxTexture3DHeight: *v = p.maxTexture3D[1]; break;
    case cudaDevAttrMaxTexture3DDepth: *v = p.maxTexture3D[2]; break;
    case cudaDevAttrMaxTexture1DLayeredWidth: *v = p.maxTexture1DLayered[0]; break;
    case cudaDevAttrMaxTexture1DLayeredLayers: *v = p.maxTexture1DLayered[1]; break;
    case cudaDevAttrMaxTexture2DLayeredWidth: *v = p.maxTexture2DLayered[0]; break;
    case cudaDevAttrMaxTexture2DLayeredHeight: *v = p.maxTexture2DLayered[1]; break;
    case cudaDevAttrMaxTexture2DLayeredLayers: *v = p.maxTexture2DLayered[2]; break;
    case cudaDevAttrMaxTextureCubemapWidth: *v = p.maxTextureCubemap; break;
    case cudaDevAttrMaxTextureCubemapLayeredWidth: *v = p.maxTextureCubemapLayered[0]; break;
    case cudaDevAttrMaxTextureCubemapLayeredLayers: *v = p.maxTextureCubemapLayered[1]; break;
    case cudaDevAttrMaxSurface1DWidth: *v = p.maxSurface1D; break;
    case cudaDevAttrMaxSurface2DWidth: *v = p.maxSurface2D[0]; break;
    case cudaDevAttrMaxSurface2DHeight: *v = p.maxSurface2D[1]; break;
    case cudaDevAttrMaxSurface3DWidth: *v = p.maxSurface3D[0]; break;
    case cudaDevAttrMaxSurface3DHeight: *v = p.maxSurface3D[1]; break;
    case cudaDevAttrMaxSurface3DDepth: *v = p.maxSurface3D[2]; break;
    case cudaDevAttrMaxSurface1DLayeredWidth: *v = p.maxSurface1DLayered[0]; break;
    case cudaDevAttrMaxSurface1DLayeredLayers: *v = p.maxSurface1DLayered[1]; break;
    case cudaDevAttrMaxSurface2DLayeredWidth: *v = p.maxSurface2DLayered[0]; break;
    case cudaDevAttrMaxSurface2DLayeredHeight: *v = p.maxSurface2DLayered[1]; break;
    case cudaDevAttrMaxSurface2DLayeredLayers: *v = p.maxSurface2DLayered[2]; break;
    case cudaDevAttrMaxSurfaceCubemapWidth: *v = p.maxSurfaceCubemap; break;
    case cudaDevAttrMaxSurfaceCubemapLayeredWidth: *v = p.maxSurfaceCubemapLayered[0]; break;
    case cudaDevAttrMaxSurfaceCubemapLayeredLayers: *v = p.maxSurfaceCubemapLayered[1]; break;
    case cudaDevAttrMemSyncDomainCount: *v = 1; break;
    case cudaDevAttrNumaId: *v = p.deviceNumaId; break;
    case cudaDevAttrHostNumaId: *v = p.hostNumaId; break;
    // Everything else is a feature the emulated device lacks (integrated memory, ECC, TCC,
    // clusters, IPC events, GPUDirect RDMA, MPS, ...): 0, as such a GPU answers.
    default: *v = 0;
  }
  return cudaSuccess;
}
static std::atomic<size_t> g_persisting_l2{0};
cudaError_t cudaDeviceSetLimit(cudaLimit l, size_t v) {
  if (l == cudaLimitPersistingL2CacheSize) g_persisting_l2 = std::min<size_t>(v, 30u << 20);
  return cudaSuccess;
}
cudaError_t cudaDeviceGetLimit(size_t* v, cudaLimit l) {
  *v = l == cudaLimitStackSize ? config().stack_bytes
       : l == cudaLimitPersistingL2CacheSize ? g_persisting_l2.load() : (size_t)8 << 20;
  return cudaSuccess;
}
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) { return cudaSuccess; }
cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig) { return cudaSuccess; }
cudaError_t cudaDriverGetVersion(int* v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaDeviceCanAccessPeer(int* can, int, int) {
  *can = 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceEnablePeerAccess(int, unsigned int) { return cudaSuccess; }
// cudaStreamSetAttribute's values, by stream and attribute.
static std::mutex g_stream_attr_mutex;
static std::map<std::pair<cudaStream_t, int>, cudaLaunchAttributeValue>& stream_attrs() {
  static auto* m = new std::map<std::pair<cudaStream_t, int>, cudaLaunchAttributeValue>;
  return *m;
}
static std::atomic<unsigned long long> g_stream_ids{2};  // 1, 2: the legacy and per-thread streams
cudaError_t cudaStreamCreate(cudaStream_t* s) { return cudaStreamCreateWithPriority(s, 0, 0); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags) {
  return cudaStreamCreateWithPriority(s, flags, 0);
}
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned int flags, int priority) {
  if (!s) return ret(cudaErrorInvalidValue);
  *s = new CUstream_st{(int)flags};
  (*s)->priority = std::clamp(priority, -5, 0);  // cudaDeviceGetStreamPriorityRange: [-5, 0]
  (*s)->id = ++g_stream_ids;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  if (builtin_stream(s)) return ret(cudaErrorInvalidResourceHandle);
  {
    std::lock_guard<std::mutex> lk(g_graph_mutex);  // a stream that joined a capture leaves it
    if (s->capture) {
      auto& j = s->capture->joined;
      j.erase(std::remove(j.begin(), j.end(), s), j.end());
    }
  }
  {
    std::lock_guard<std::mutex> lk(g_stream_attr_mutex);
    for (auto it = stream_attrs().begin(); it != stream_attrs().end();)
      it = it->first.first == s ? stream_attrs().erase(it) : std::next(it);
  }
  delete s;
  return cudaSuccess;
}
// Every operation runs synchronously in issue order, so streams are always idle. A capturing
// stream may not be waited for or queried (a GPU invalidates its capture).
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  if (capturing(s)) {
    invalidate_capture(s);
    return ret(cudaErrorStreamCaptureUnsupported);
  }
  return (cudaError_t)g_sticky.load();
}
cudaError_t cudaStreamQuery(cudaStream_t s) {
  if (capturing(s)) {
    invalidate_capture(s);
    return ret(cudaErrorStreamCaptureUnsupported);
  }
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int) {
  // A stream waiting on an event recorded during a capture joins it (fork/join across streams):
  // its work goes to the same chain, in issue order.
  s = capture_stream(s);
  if (e != nullptr && s != nullptr) {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    if (e->capture != nullptr && s->capture == nullptr && active_captures().count(e->capture)) {
      s->capture = e->capture;
      e->capture->joined.push_back(s);
    }
  }
  return cudaSuccess;
}
// Not supported in stream capture, unlike cudaLaunchHostFunc (Runtime API reference,
// cudaStreamAddCallback): refused with the capture's error and the capture invalidated, as the
// other calls a GPU refuses there.
cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void* data, unsigned int) {
  if (capturing(s)) {
    invalidate_capture(s);
    return ret(cudaErrorStreamCaptureUnsupported);
  }
  cb(s, cudaSuccess, data);
  return cudaSuccess;
}
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void* data) {
  if (capturing(s)) {
    return capture(s, new _Closure_of<std::function<void()>>([=] { fn(data); }), cudaGraphNodeTypeHost);
  }
  fn(data);
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* e) {
  *e = new CUevent_st{};
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) { return cudaEventCreate(e); }
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  if (!e) return ret(cudaErrorInvalidResourceHandle);
  s = capture_stream(s);
  if (s != nullptr) {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    e->capture = s->capture;  // a stream that waits on it joins that capture
  }
  e->e.t = std::chrono::steady_clock::now();
  e->e.recorded = true;
  return cudaSuccess;
}
// An event last recorded in a capturing stream stands for work of a graph, not of a stream:
// cudaErrorCapturedEvent ("not permitted on an event which was last recorded in a capturing
// stream") rather than a wait that would pass before the graph ever ran.
// Only while that capture is under way: whether a GPU still refuses the event once the capture
// ended is not documented.
static bool recorded_in_capture(cudaEvent_t e) {
  if (e == nullptr) return false;
  std::lock_guard<std::mutex> lk(g_graph_mutex);
  return e->capture != nullptr && active_captures().count(e->capture);
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  if (recorded_in_capture(e)) return ret(cudaErrorCapturedEvent);
  return (cudaError_t)g_sticky.load();
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
  if (recorded_in_capture(e)) return ret(cudaErrorCapturedEvent);
  return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  if (!a || !b || !a->e.recorded || !b->e.recorded) return ret(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(b->e.t - a->e.t).count();
  return cudaSuccess;
}
cudaError_t cudaProfilerStart() { return cudaSuccess; }
cudaError_t cudaProfilerStop() { return cudaSuccess; }

// ---------------------------------------------------------------- more of the runtime API
cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp* prop) {
  if (!device || !prop) return ret(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags) {
  if (device != 0) return ret(cudaErrorInvalidDevice);
  if (flags & cudaInitDeviceFlagsAreValid) return cudaSetDeviceFlags(deviceFlags);
  return cudaSuccess;
}
cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  if (!flags) return ret(cudaErrorInvalidValue);
  *flags = g_device_flags.load() | cudaDeviceMapHost;  // host memory is always mapped (UVA)
  return cudaSuccess;
}
cudaError_t cudaSetValidDevices(int* devices, int n) {
  if (n < 0 || (n > 0 && !devices)) return ret(cudaErrorInvalidValue);
  for (int i = 0; i < n; ++i)
    if (devices[i] != 0) return ret(cudaErrorInvalidDevice);
  return cudaSuccess;
}
// The one device sits at PCI 0000:00:00.0 (cudaDeviceProp's pciDomainID/pciBusID/pciDeviceID).
cudaError_t cudaDeviceGetByPCIBusId(int* device, const char* id) {
  if (!device || !id) return ret(cudaErrorInvalidValue);
  unsigned dom = 0, bus = 0, dev = 0, fn = 0;
  int n = sscanf(id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn);
  if (n < 3) {
    dom = 0;
    n = sscanf(id, "%x:%x.%x", &bus, &dev, &fn);
    if (n < 2) return ret(cudaErrorInvalidValue);
  }
  if (dom != 0 || bus != 0 || dev != 0) return ret(cudaErrorInvalidDevice);
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetPCIBusId(char* id, int len, int device) {
  if (device != 0) return ret(cudaErrorInvalidDevice);
  if (!id || len <= 0) return ret(cudaErrorInvalidValue);
  snprintf(id, (size_t)len, "0000:00:00.0");
  return cudaSuccess;
}
cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* c) {
  if (!c) return ret(cudaErrorInvalidValue);
  *c = cudaFuncCachePreferNone;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetSharedMemConfig(cudaSharedMemConfig* c) {
  if (!c) return ret(cudaErrorInvalidValue);
  *c = cudaSharedMemBankSizeFourByte;
  return cudaSuccess;
}
cudaError_t cudaDeviceDisablePeerAccess(int) { return cudaSuccess; }  // as cudaDeviceEnablePeerAccess
// One device: no pair of distinct devices to describe.
cudaError_t cudaDeviceGetP2PAttribute(int* value, cudaDeviceP2PAttr, int src, int dst) {
  if (!value) return ret(cudaErrorInvalidValue);
  (void)src;
  (void)dst;
  return ret(cudaErrorInvalidDevice);
}
cudaError_t cudaDeviceGetTexture1DLinearMaxWidth(size_t* w, const cudaChannelFormatDesc*, int device) {
  if (device != 0) return ret(cudaErrorInvalidDevice);
  if (!w) return ret(cudaErrorInvalidValue);
  *w = (size_t)1 << 28;
  return cudaSuccess;
}
cudaError_t cudaCtxResetPersistingL2Cache() { return cudaSuccess; }
cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned int* flags) {
  if (!flags) return ret(cudaErrorInvalidValue);
  *flags = builtin_stream(s) ? cudaStreamDefault : (unsigned)s->flags;
  return cudaSuccess;
}
cudaError_t cudaStreamGetPriority(cudaStream_t s, int* priority) {
  if (!priority) return ret(cudaErrorInvalidValue);
  *priority = builtin_stream(s) ? 0 : s->priority;
  return cudaSuccess;
}
cudaError_t cudaStreamGetDevice(cudaStream_t, int* device) {
  if (!device) return ret(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long* id) {
  if (!id) return ret(cudaErrorInvalidValue);
  *id = s == nullptr || s == cudaStreamLegacy ? 1 : s == cudaStreamPerThread ? 2 : s->id;
  return cudaSuccess;
}
cudaError_t cudaStreamAttachMemAsync(cudaStream_t, void*, size_t, unsigned int flags) {
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost && flags != cudaMemAttachSingle)
    return ret(cudaErrorInvalidValue);
  return cudaSuccess;
}
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, cudaStreamCaptureStatus* status, unsigned long long* id,
                                     cudaGraph_t* graph, const cudaGraphNode_t** deps, const cudaGraphEdgeData** edges,
                                     size_t* ndeps) {
  if (!status) return ret(cudaErrorInvalidValue);
  cudaError_t e = cudaStreamIsCapturing(s, status);
  if (e != cudaSuccess) return e;
  CUgraph_st* g = nullptr;
  if (*status == cudaStreamCaptureStatusActive) {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    g = capture_stream(s)->capture;
  }
  // The capture's id: its graph's address, the same for every stream that joined it.
  if (id) *id = g ? (unsigned long long)reinterpret_cast<uintptr_t>(g) : 0;
  if (graph) *graph = g;
  // What the next captured work will depend on (a copy: valid until the next call).
  static thread_local std::vector<cudaGraphNode_t> tail;
  {
    std::lock_guard<std::mutex> lk(g_graph_mutex);
    if (g) tail.assign(g->tail.begin(), g->tail.end());
    else tail.clear();
  }
  if (deps) *deps = tail.empty() ? nullptr : tail.data();
  if (edges) *edges = nullptr;
  if (ndeps) *ndeps = tail.size();
  return cudaSuccess;
}
static bool stream_attr_ok(cudaStreamAttrID a) {
  return a == cudaLaunchAttributeAccessPolicyWindow || a == cudaLaunchAttributeSynchronizationPolicy ||
         a == cudaLaunchAttributeMemSyncDomainMap || a == cudaLaunchAttributeMemSyncDomain ||
         a == cudaLaunchAttributePriority;
}
cudaError_t cudaStreamSetAttribute(cudaStream_t s, cudaStreamAttrID a, const cudaStreamAttrValue* v) {
  if (!v || !stream_attr_ok(a)) return ret(cudaErrorInvalidValue);
  if (a == cudaLaunchAttributePriority) {
    if (builtin_stream(s)) return cudaSuccess;
    s->priority = std::clamp(v->priority, -5, 0);
    return cudaSuccess;
  }
  if (a == cudaLaunchAttributeAccessPolicyWindow && (v->accessPolicyWindow.hitRatio < 0.0f ||
                                                     v->accessPolicyWindow.hitRatio > 1.0f))
    return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_stream_attr_mutex);
  stream_attrs()[{s, (int)a}] = *v;
  return cudaSuccess;
}
cudaError_t cudaStreamGetAttribute(cudaStream_t s, cudaStreamAttrID a, cudaStreamAttrValue* v) {
  if (!v || !stream_attr_ok(a)) return ret(cudaErrorInvalidValue);
  memset(v, 0, sizeof *v);
  if (a == cudaLaunchAttributePriority) {
    v->priority = builtin_stream(s) ? 0 : s->priority;
    return cudaSuccess;
  }
  if (a == cudaLaunchAttributeSynchronizationPolicy) v->syncPolicy = cudaSyncPolicyAuto;
  std::lock_guard<std::mutex> lk(g_stream_attr_mutex);
  auto it = stream_attrs().find({s, (int)a});
  if (it != stream_attrs().end()) *v = it->second;
  return cudaSuccess;
}
cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src) {
  std::lock_guard<std::mutex> lk(g_stream_attr_mutex);
  for (auto it = stream_attrs().begin(); it != stream_attrs().end(); ++it)
    if (it->first.first == src) stream_attrs()[{dst, it->first.second}] = it->second;
  if (!builtin_stream(dst) && !builtin_stream(src)) dst->priority = src->priority;
  return cudaSuccess;
}
cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned int) { return cudaEventRecord(e, s); }
cudaError_t cudaHostGetFlags(unsigned int* flags, void* p) {
  if (!flags) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_alloc_mutex);
  auto it = host_alloc_flags().find(p);
  if (it == host_alloc_flags().end()) return ret(cudaErrorInvalidValue);
  *flags = it->second | cudaHostAllocMapped;  // page-locked memory is mapped (UVA)
  return cudaSuccess;
}
cudaError_t cudaMemcpyPeerAsync(void* dst, int dd, const void* src, int sd, size_t n, cudaStream_t s) {
  if (dd != 0 || sd != 0) return ret(cudaErrorInvalidDevice);
  return cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s);
}
cudaError_t cudaMemset2DAsync(void* p, size_t pitch, int v, size_t width, size_t height, cudaStream_t s) {
  if (capturing(s)) {
    return capture(s, new _Closure_of<std::function<void()>>([=] { cudaMemset2D(p, pitch, v, width, height); }), cudaGraphNodeTypeMemset);
  }
  return cudaMemset2D(p, pitch, v, width, height);
}
// A pitched 3D box: `depth` slices of `height` rows of `pitch` bytes (p.ysize rows per slice).
cudaError_t cudaMemset3D(cudaPitchedPtr p, int v, cudaExtent e) {
  if (e.width == 0 || e.height == 0 || e.depth == 0) return cudaSuccess;
  const size_t rows = p.ysize ? p.ysize : e.height;
  if (e.height > rows) return ret(cudaErrorInvalidValue);
  for (size_t z = 0; z < e.depth; ++z) {
    cudaError_t r = cudaMemset2D(static_cast<char*>(p.ptr) + z * rows * p.pitch, p.pitch, v, e.width, e.height);
    if (r != cudaSuccess) return r;
  }
  return cudaSuccess;
}
cudaError_t cudaMemset3DAsync(cudaPitchedPtr p, int v, cudaExtent e, cudaStream_t s) {
  if (capturing(s)) {
    return capture(s, new _Closure_of<std::function<void()>>([=] { cudaMemset3D(p, v, e); }), cudaGraphNodeTypeMemset);
  }
  return cudaMemset3D(p, v, e);
}

// Stream-ordered memory pools. Every pool's memory is the emulator's device memory, allocated at
// the call (as cudaMallocAsync's is); a pool counts what it holds for its attributes.
struct CUmemPoolHandle_st {
  bool is_default = false;
  unsigned long long threshold = 0, used = 0, used_high = 0, reserved_high = 0;
  int reuse[3] = {1, 1, 1};
  cudaMemAccessFlags access = cudaMemAccessFlagsProtReadWrite;
};
static CUmemPoolHandle_st* default_pool() {
  static CUmemPoolHandle_st* p = [] {
    auto* q = new CUmemPoolHandle_st;
    q->is_default = true;
    return q;
  }();
  return p;
}
static std::atomic<CUmemPoolHandle_st*> g_current_pool{nullptr};
static CUmemPoolHandle_st* current_pool() {
  CUmemPoolHandle_st* p = g_current_pool.load();
  return p ? p : default_pool();
}
static std::unordered_map<void*, std::pair<CUmemPoolHandle_st*, size_t>>& pool_allocs() {
  static auto* m = new std::unordered_map<void*, std::pair<CUmemPoolHandle_st*, size_t>>;
  return *m;
}
cudaError_t cudashim_pool_alloc(void** p, size_t n, CUmemPoolHandle_st* pool) {
  cudaError_t r = alloc_into(device_allocs(), p, n, true);
  if (r != cudaSuccess || !*p) return r;
  std::lock_guard<std::mutex> lk(g_alloc_mutex);
  pool_allocs()[*p] = {pool, n};
  pool->used += n;
  pool->used_high = std::max(pool->used_high, pool->used);
  pool->reserved_high = std::max(pool->reserved_high, pool->used);
  return cudaSuccess;
}
void cudashim_pool_free(void* p) {
  std::lock_guard<std::mutex> lk(g_alloc_mutex);
  auto it = pool_allocs().find(p);
  if (it == pool_allocs().end()) return;
  it->second.first->used -= it->second.second;
  pool_allocs().erase(it);
}
static bool device_location(const cudaMemLocation* l) {
  return l && l->type == cudaMemLocationTypeDevice && l->id == 0;
}
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  if (device != 0) return ret(cudaErrorInvalidDevice);
  if (!pool) return ret(cudaErrorInvalidValue);
  *pool = default_pool();
  return cudaSuccess;
}
cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) {
  if (device != 0) return ret(cudaErrorInvalidDevice);
  if (!pool) return ret(cudaErrorInvalidValue);
  *pool = current_pool();
  return cudaSuccess;
}
cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool) {
  if (device != 0) return ret(cudaErrorInvalidDevice);
  if (!pool) return ret(cudaErrorInvalidValue);
  g_current_pool.store(pool);
  return cudaSuccess;
}
cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t* pool, cudaMemLocation* l, cudaMemAllocationType t) {
  if (!pool || !device_location(l) || t != cudaMemAllocationTypePinned) return ret(cudaErrorInvalidValue);
  *pool = default_pool();
  return cudaSuccess;
}
cudaError_t cudaMemGetMemPool(cudaMemPool_t* pool, cudaMemLocation* l, cudaMemAllocationType t) {
  if (!pool || !device_location(l) || t != cudaMemAllocationTypePinned) return ret(cudaErrorInvalidValue);
  *pool = current_pool();
  return cudaSuccess;
}
cudaError_t cudaMemSetMemPool(cudaMemLocation* l, cudaMemAllocationType t, cudaMemPool_t pool) {
  if (!pool || !device_location(l) || t != cudaMemAllocationTypePinned) return ret(cudaErrorInvalidValue);
  g_current_pool.store(pool);
  return cudaSuccess;
}
cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props) {
  if (!pool || !props || props->allocType != cudaMemAllocationTypePinned) return ret(cudaErrorInvalidValue);
  if (props->location.type != cudaMemLocationTypeDevice) return ret(cudaErrorInvalidValue);
  if (props->location.id != 0) return ret(cudaErrorInvalidDevice);
  *pool = new CUmemPoolHandle_st;
  return cudaSuccess;
}
cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
  if (!pool || pool->is_default) return ret(cudaErrorInvalidValue);
  CUmemPoolHandle_st* expected = pool;
  g_current_pool.compare_exchange_strong(expected, nullptr);  // the device's pool reverts to the default
  std::lock_guard<std::mutex> lk(g_alloc_mutex);
  for (auto it = pool_allocs().begin(); it != pool_allocs().end();) {
    if (it->second.first == pool) it = pool_allocs().erase(it);  // still valid memory, now unowned
    else ++it;
  }
  delete pool;
  return cudaSuccess;
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr a, void* value) {
  if (!pool || !value) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_alloc_mutex);
  switch (a) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies:
      pool->reuse[a - 1] = *static_cast<int*>(value) != 0;
      return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold: pool->threshold = *static_cast<unsigned long long*>(value); return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:  // may only be reset to 0 (to the current value)
      if (*static_cast<unsigned long long*>(value) != 0) break;
      pool->reserved_high = pool->used;
      return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh:
      if (*static_cast<unsigned long long*>(value) != 0) break;
      pool->used_high = pool->used;
      return cudaSuccess;
    default: break;
  }
  return ret(cudaErrorInvalidValue);
}
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr a, void* value) {
  if (!pool || !value) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(g_alloc_mutex);
  unsigned long long* v = static_cast<unsigned long long*>(value);
  switch (a) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies: *static_cast<int*>(value) = pool->reuse[a - 1]; return cudaSuccess;
    case cudaMemPoolAttrReleaseThreshold: *v = pool->threshold; return cudaSuccess;
    // Freed memory goes back at once here: what a pool reserves is what it holds.
    case cudaMemPoolAttrReservedMemCurrent: *v = pool->used; return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh: *v = pool->reserved_high; return cudaSuccess;
    case cudaMemPoolAttrUsedMemCurrent: *v = pool->used; return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh: *v = pool->used_high; return cudaSuccess;
  }
  return ret(cudaErrorInvalidValue);
}
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t) { return pool ? cudaSuccess : ret(cudaErrorInvalidValue); }
cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc* descs, size_t count) {
  if (!pool || (count && !descs)) return ret(cudaErrorInvalidValue);
  for (size_t i = 0; i < count; ++i) {
    if (descs[i].location.type != cudaMemLocationTypeDevice) return ret(cudaErrorInvalidValue);
    if (descs[i].location.id != 0) return ret(cudaErrorInvalidDevice);
    pool->access = descs[i].flags;
  }
  return cudaSuccess;
}
cudaError_t cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t pool, cudaMemLocation* l) {
  if (!flags || !pool || !device_location(l)) return ret(cudaErrorInvalidValue);
  *flags = pool->access;
  return cudaSuccess;
}
cudaError_t cudaMallocFromPoolAsync(void** p, size_t n, cudaMemPool_t pool, cudaStream_t s) {
  if (!pool) return ret(cudaErrorInvalidValue);
  if (capturing(s)) return graph_capture_malloc(s, p, n);  // a graph allocation node
  return cudashim_pool_alloc(p, n, pool);
}

#if defined(CUDASHIM_FIBER_ASAN)
// AddressSanitizer enforces C11's rule that aligned_alloc's size be a multiple of the alignment
// and returns NULL otherwise; glibc (what nvcc's host compiler links) follows C17 and allocates.
// Programs such as HeCBench's softmax call aligned_alloc(1024, n * 4), so the ASan build would
// crash where the real one runs. posix_memalign has no such rule and ASan still tracks the
// exact size, so overruns past `size` are still reported.
extern "C" void* aligned_alloc(size_t alignment, size_t size) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  void* p = nullptr;
  const int rc = posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, size);
  if (rc != 0) {
    errno = rc;
    return nullptr;
  }
  return p;
}
#endif

#ifdef CUDASHIM_LIBRARY
// Kernel launches made through this runtime so far in the process: the KernelBench verifier
// requires an answer's forward to launch at least one of its own kernels (torch_cuda.py reads it).
extern "C" __attribute__((visibility("default"))) long long cudashim_launch_count() {
  return cudashim::g_launches.load();
}
// Computing library calls made so far in the process, of library `index` (0 thrust, 1 cub,
// 2 cublas, 3 cusparse, 4 curand, 5 cufft, 6 other; -1 for a bad index): a KernelBench answer's forward
// that did library work says so in its result.
extern "C" __attribute__((visibility("default"))) long long cudashim_library_calls(int index) {
  return index >= 0 && index < 7 ? cudashim::g_library_calls[index].load() : -1;
}
#endif
#include "c_api.cpp"
