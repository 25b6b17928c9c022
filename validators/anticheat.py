"""Anti-cheat checks: what KernelBench and robust-kbench learned the hard way.

Each check returns a reason (the case is then `rejected`) or an empty string.

- Static (source): no kernel launch at all (no `<<<...>>>`, no `cudaLaunchKernel`-style call
  and no CUDA library doing the work); a hard-coded table of float literals (one brace
  initialiser with >= HARDCODED_FLOATS literals: real programs keep small filter/coefficient
  tables, far below that); `fopen`/`open`/file-stream calls naming a literal path other than
  `data/<input or output>.bin`.
- Dynamic (the run): an `LD_PRELOAD` shim (built once with gcc, cached) logs every
  `open*`/`fopen*`/`creat` path, every removal/rename/mkdir by name, every AF_INET/AF_INET6
  `socket` and every path-bound unix-socket `connect` into the work directory's `ACCESS_LOG`. A path outside `data/` and outside the system locations a C/CUDA runtime reads
  (`/usr`, `/lib`, `/proc`, `/sys`, `/dev`, `/etc/ld.so.*`, ...) is rejected, as is opening an
  internet socket, and so is an input the program never opened (its outputs cannot depend on
  it). The shim is detection only (it names what was tried): a statically linked program, raw
  system calls or deleting the log bypass it, and none of that matters: the sandbox's
  allow-list view and seccomp filter are what contain a program, and "never read input" comes
  from the inputs' access times (`validators.sandbox.inputs_read`) where the sandbox can
  protect them; only in the weaker sandbox modes is the log the evidence.
- Outputs: constant (or all-zero) outputs where the reference is not; read-only inputs
  modified by the run (compared by content hash).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np

from schemas import Task

from . import kernel_work
from .build_cache import BuildCache
from .compare import read_no_follow

ACCESS_LOG = ".ckd-access.log"
UPLOAD_LOG = ".ckd-uploads"
"""Written by the cpu runtime in the no-launch run (see validators.engine.upload_hash)."""
POISON_LOG = ".ckd-poison"
"""Written by the cpu runtime in the poisoned runs (the buffers it filled, by number)."""
RUNTIME_FILES = {ACCESS_LOG, UPLOAD_LOG, POISON_LOG, kernel_work.INPUTS_FILE,
                 kernel_work.LOG_FILE, ".ckd-kernel-timing"}
HARDCODED_FLOATS = 256
ALLOWED_PREFIXES = ("/usr/", "/lib/", "/lib64/", "/lib32/", "/proc/", "/sys/", "/dev/",
                    "/etc/ld.so.", "/etc/localtime", "/run/nvidia", "/var/run/nvidia")
LIBRARY_FEATURES = {"cublas", "cudnn", "cufft", "curand", "cusparse", "cusolver", "thrust",
                    "cub", "cutlass"}

SHIM_SOURCE = r"""#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static int log_fd = -2;

static void record(const char *kind, const char *path) {
  if (log_fd == -2) {
    const char *p = getenv("CKD_ACCESS_LOG");
    log_fd = p ? (int)syscall(SYS_openat, AT_FDCWD, p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
  }
  if (log_fd < 0 || !path) return;
  char buf[4200];
  int n = snprintf(buf, sizeof buf, "%s\t%.4096s\n", kind, path);
  if (n > 0) { int e = errno; syscall(SYS_write, log_fd, buf, (size_t)(n < (int)sizeof buf ? n : (int)sizeof buf - 1)); errno = e; }
}

static const char *flags_kind(int flags) {
  int acc = flags & O_ACCMODE;
  return acc == O_RDONLY ? "r" : acc == O_WRONLY ? "w" : "rw";
}
static const char *mode_kind(const char *mode) {
  if (!mode) return "r";
  if (strchr(mode, '+')) return "rw";
  return mode[0] == 'r' ? "r" : "w";
}

#define REAL(name, ret, args) static ret (*real_##name) args; if (!real_##name) real_##name = (ret (*) args)dlsym(RTLD_NEXT, #name)

#define OPEN_LIKE(name) \
int name(const char *path, int flags, ...) { \
  REAL(name, int, (const char *, int, ...)); \
  mode_t m = 0; if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); m = va_arg(ap, mode_t); va_end(ap); } \
  record(flags_kind(flags), path); return real_##name(path, flags, m); }
OPEN_LIKE(open)
OPEN_LIKE(open64)

/* openat relative to a directory fd: log the directory's path joined with the name. */
static void record_at(const char *kind, int dirfd, const char *path) {
  if (!path || path[0] == '/' || dirfd == AT_FDCWD) { record(kind, path); return; }
  char link[64], dir[4096], full[8300];
  snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
  ssize_t n = readlink(link, dir, sizeof dir - 1);
  if (n <= 0) { record(kind, path); return; }
  dir[n] = 0;
  snprintf(full, sizeof full, "%s/%s", dir, path);
  record(kind, full);
}

#define OPENAT_LIKE(name) \
int name(int dirfd, const char *path, int flags, ...) { \
  REAL(name, int, (int, const char *, int, ...)); \
  mode_t m = 0; if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); m = va_arg(ap, mode_t); va_end(ap); } \
  record_at(flags_kind(flags), dirfd, path); return real_##name(dirfd, path, flags, m); }
OPENAT_LIKE(openat)
OPENAT_LIKE(openat64)

int __open_2(const char *path, int flags) { REAL(__open_2, int, (const char *, int)); record(flags_kind(flags), path); return real___open_2(path, flags); }
int __open64_2(const char *path, int flags) { REAL(__open64_2, int, (const char *, int)); record(flags_kind(flags), path); return real___open64_2(path, flags); }
int creat(const char *path, mode_t m) { REAL(creat, int, (const char *, mode_t)); record("w", path); return real_creat(path, m); }
FILE *fopen(const char *path, const char *mode) { REAL(fopen, FILE *, (const char *, const char *)); record(mode_kind(mode), path); return real_fopen(path, mode); }
FILE *fopen64(const char *path, const char *mode) { REAL(fopen64, FILE *, (const char *, const char *)); record(mode_kind(mode), path); return real_fopen64(path, mode); }
FILE *freopen(const char *path, const char *mode, FILE *f) { REAL(freopen, FILE *, (const char *, const char *, FILE *)); record(mode_kind(mode), path); return real_freopen(path, mode, f); }
/* Changes to the file system by name: logged as writes ("d" for removals). */
int unlink(const char *path) { REAL(unlink, int, (const char *)); record("d", path); return real_unlink(path); }
int unlinkat(int dirfd, const char *path, int flags) { REAL(unlinkat, int, (int, const char *, int)); record_at("d", dirfd, path); return real_unlinkat(dirfd, path, flags); }
int remove(const char *path) { REAL(remove, int, (const char *)); record("d", path); return real_remove(path); }
int rmdir(const char *path) { REAL(rmdir, int, (const char *)); record("d", path); return real_rmdir(path); }
int rename(const char *a, const char *b) { REAL(rename, int, (const char *, const char *)); record("d", a); record("w", b); return real_rename(a, b); }
int mkdir(const char *path, mode_t m) { REAL(mkdir, int, (const char *, mode_t)); record("w", path); return real_mkdir(path, m); }
int truncate(const char *path, off_t len) { REAL(truncate, int, (const char *, off_t)); record("w", path); return real_truncate(path, len); }
/* A path-bound unix socket is a file outside the run like any other. */
int connect(int fd, const struct sockaddr *addr, socklen_t len) {
  REAL(connect, int, (int, const struct sockaddr *, socklen_t));
  if (addr && addr->sa_family == AF_UNIX && len > (socklen_t)sizeof(sa_family_t)) {
    const struct sockaddr_un *u = (const struct sockaddr_un *)addr;
    if (u->sun_path[0]) { char p[sizeof u->sun_path + 1]; memcpy(p, u->sun_path, sizeof u->sun_path); p[sizeof u->sun_path] = 0; record("rw", p); }
  }
  return real_connect(fd, addr, len); }
int socket(int domain, int type, int protocol) {
  REAL(socket, int, (int, int, int));
  if (domain == AF_INET || domain == AF_INET6) record("net", domain == AF_INET ? "inet" : "inet6");
  return real_socket(domain, type, protocol); }
/* The cpu backend keeps device memory PROT_NONE while host code runs (its runtime changes that
   with raw system calls of its own). A program that changes memory protection or reaches into
   its own memory past it, by whatever spelling its source used, is refused here and logged. */
static int closed = -1;
static int refuse(const char *what) {
  if (closed < 0) { const char *v = getenv("CKD_DEVICE_MEMORY_CLOSED"); closed = v && v[0] == '1'; }
  if (!closed) return 0;
  record("call", what); errno = EPERM; return 1; }
int mprotect(void *a, size_t n, int prot) { REAL(mprotect, int, (void *, size_t, int)); if (refuse("mprotect")) return -1; return real_mprotect(a, n, prot); }
int pkey_mprotect(void *a, size_t n, int prot, int key) { REAL(pkey_mprotect, int, (void *, size_t, int, int)); if (refuse("pkey_mprotect")) return -1; return real_pkey_mprotect(a, n, prot, key); }
void *mremap(void *old, size_t on, size_t nn, int flags, ...) {
  REAL(mremap, void *, (void *, size_t, size_t, int, ...));
  va_list ap; va_start(ap, flags); void *to = va_arg(ap, void *); va_end(ap);
  if (refuse("mremap")) return (void *)-1;
  return real_mremap(old, on, nn, flags, to); }
#include <sys/uio.h>
ssize_t process_vm_readv(pid_t pid, const struct iovec *l, unsigned long ln, const struct iovec *r, unsigned long rn, unsigned long f) {
  REAL(process_vm_readv, ssize_t, (pid_t, const struct iovec *, unsigned long, const struct iovec *, unsigned long, unsigned long));
  if (refuse("process_vm_readv")) return -1; return real_process_vm_readv(pid, l, ln, r, rn, f); }
ssize_t process_vm_writev(pid_t pid, const struct iovec *l, unsigned long ln, const struct iovec *r, unsigned long rn, unsigned long f) {
  REAL(process_vm_writev, ssize_t, (pid_t, const struct iovec *, unsigned long, const struct iovec *, unsigned long, unsigned long));
  if (refuse("process_vm_writev")) return -1; return real_process_vm_writev(pid, l, ln, r, rn, f); }
long syscall(long nr, ...) {
  REAL(syscall, long, (long, ...));
  va_list ap; va_start(ap, nr);
  long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long), d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
  va_end(ap);
  const char *what = nr == SYS_mprotect ? "syscall(SYS_mprotect)" : nr == SYS_pkey_mprotect ? "syscall(SYS_pkey_mprotect)"
      : nr == SYS_mremap ? "syscall(SYS_mremap)" : nr == SYS_process_vm_readv ? "syscall(SYS_process_vm_readv)"
      : nr == SYS_process_vm_writev ? "syscall(SYS_process_vm_writev)" : 0;
  if (what && refuse(what)) return -1;
  return real_syscall(nr, a, b, c, d, e, f); }
"""


@functools.cache
def _gcc() -> tuple[str, str] | None:
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    return gcc, subprocess.run([gcc, "--version"], capture_output=True, text=True).stdout


def shim_library(cache: BuildCache | None = None) -> Path | None:
    """The access-logging LD_PRELOAD library (built with gcc, cached), or None without gcc."""
    found = _gcc()
    if found is None:
        return None
    gcc, version = found
    cache = cache or BuildCache()
    key = BuildCache.key(kind="access-shim", source=SHIM_SOURCE, compiler=version)

    def build(tmp: Path):
        from schemas import CompileInfo

        (tmp / "shim.c").write_text(SHIM_SOURCE)
        cmd = [gcc, "-O2", "-shared", "-fPIC", "-o", "libckdaccess.so", "shim.c", "-ldl"]
        out = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=120)
        (tmp / "shim.c").unlink()
        return CompileInfo(compiler="gcc", command=cmd, ok=out.returncode == 0,
                           diagnostics=out.stderr[-2000:])

    path, _ = cache.get_or_build(key, build, artifact="libckdaccess.so")
    return path


# --- static ----------------------------------------------------------------------------------

_FLOAT_LIT = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?[fFlL]?(?![\w.])")
_INIT_LIST = re.compile(r"=\s*\{([^{}]*)\}")
_FILE_CALL = re.compile(
    r"\b(?:fopen|fopen64|open|freopen|creat)\s*\(\s*\"([^\"]*)\""
    r"|\b(?:std::)?(?:i|o)?fstream\s+\w+\s*[({]\s*\"([^\"]*)\""
    r"|\.open\s*\(\s*\"([^\"]*)\""
)
_LAUNCH_API = re.compile(r"\b(?:cudaLaunchKernel\w*|cudaLaunchCooperativeKernel\w*|cuLaunchKernel\w*|"
                         r"cudaGraphLaunch)\s*\(")


NO_KERNEL_LAUNCH = "no kernel launch"
_TRIPLE_LAUNCH = re.compile(r"<<<[^;]*?>>>\s*\(")


def no_kernel_launch(text: str, launches: int, features: list[str]) -> str:
    """A static rejection of a program that launches nothing. A library call may compute on
    the device without a launch, so a program naming a library is not rejected here; naming
    one (the features are read from the text) waives nothing at run time: the engine's
    device-input run judges it as any other (`validators.kernel_work`)."""
    if launches or _LAUNCH_API.search(text) or LIBRARY_FEATURES & set(features):
        return ""
    # The parser's count misses launches it cannot read as one (a preprocessor line inside the
    # `<<< >>>`, a launch after a statement macro used without a `;`): the text decides then.
    if _TRIPLE_LAUNCH.search(_code_only(text)):
        return ""
    return f"{NO_KERNEL_LAUNCH}: the program computes nothing on the device"


def hardcoded_table(text: str) -> str:
    for m in _INIT_LIST.finditer(text):
        n = len(_FLOAT_LIT.findall(m.group(1)))
        if n >= HARDCODED_FLOATS:
            line = text.count("\n", 0, m.start()) + 1
            return (f"hard-coded results: an initialiser of {n} float literals at line {line} "
                    f"(limit {HARDCODED_FLOATS})")
    return ""


def literal_file_paths(text: str, allowed: set[str]) -> str:
    for m in _FILE_CALL.finditer(text):
        path = next(g for g in m.groups() if g is not None)
        if "%" in path or not path or text[m.end():m.end() + 64].lstrip().startswith("+"):
            # A format string, or the head of a path built by concatenation ("./data/" + name):
            # resolved at run time, checked by the access log.
            continue
        norm = os.path.normpath(path)
        if norm not in allowed:
            line = text.count("\n", 0, m.start()) + 1
            return f"opens a file other than its inputs and outputs: {path!r} (line {line})"
    return ""


# What host code would call to undo the emulator's closing of device memory (validators/cpu:
# the device arena is PROT_NONE while host code runs) or to reach the runtime's internals. A
# kernel program has no use for any of it, on either backend, so it is refused everywhere.
_TAMPERING = re.compile(
    # A name, called or not: `auto f = &mprotect;` reaches it as surely as a call does.
    r"(?<![\w])(?P<call>_*(?:pkey_mprotect|mprotect|pkey_alloc|pkey_set|mremap|dlsym|dlvsym"
    r"|dlopen))\b"
    r"|\b(?P<name>cudashim\s*::|(?:SYS|__NR)_(?:mprotect|pkey_mprotect|mremap)\b)"
)
# Raw system calls: `syscall(10, ...)` is mprotect by number, which no name-based rule sees. The
# few calls a program has a reason to make by number are allowed by name; anything else (a bare
# number, a variable, taking syscall's address) is refused.
_SYSCALL = re.compile(r"(?<![\w])_*syscall\b(?P<args>\s*\(\s*(?P<nr>[^,)]*))?")
_HARMLESS_SYSCALLS = re.compile(
    r"(?:SYS|__NR)_(?:gettid|getpid|getppid|getcpu|sched_yield|sched_getaffinity|getuid|"
    r"geteuid|getgid|getegid|gettimeofday|clock_gettime|clock_getres|time|futex|getrandom|"
    r"uname|sysinfo|getrusage)\s*$")
# Inline assembly that enters the kernel directly. PTX has no such instruction, so CUDA code
# that uses `asm` for PTX is never caught by this.
_ASM = re.compile(r"\b(?:__asm__|__asm|asm)\b(?:\s*(?:volatile|__volatile__|goto|inline))*"
                  r"\s*\(")
_ENTERS_KERNEL = re.compile(r"\b(?:syscall|sysenter|svc)\b|\bint\s*\$?0x80\b")


def _code_only(text: str, *, literals: bool = False) -> str:
    """`text` with comments blanked and, unless `literals`, the contents of string and
    character literals too (read in one pass, so a `//` inside a literal does not hide the code
    after it). Line breaks are kept, so line numbers still hold."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            closed = j < n and text[j] == c
            if literals:
                out.append(text[i:j + 1 if closed else j])
            else:
                out.append(c + " " * (min(j, n) - i - 1) + (c if closed else ""))
            i = j + 1 if closed else j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            end = n if j < 0 else j + 2
            out.append(" " + "\n" * text.count("\n", i, end))
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _asm_entering_kernel(text: str) -> int | None:
    """Offset of an inline-assembly statement whose instructions include a system call."""
    for m in _ASM.finditer(text):
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        body = " ".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', text[m.end():j]))
        body = re.sub(r"\\.", " ", body)  # `\n\tsyscall`: an escape is a separator
        if _ENTERS_KERNEL.search(body):
            return m.start()
    return None


def protection_tampering(text: str) -> str:
    """A reason when host code calls what would undo device memory's protection (mprotect,
    its system-call numbers, raw system calls, symbol lookups) or names the cpu runtime's
    internals."""
    # `#include <sys/syscall.h>` names a header, not the function.
    code = re.sub(r"(?m)^[ \t]*#[ \t]*include\b.*$", "", _code_only(text))
    found: list[tuple[int, str]] = []
    m = _TAMPERING.search(code)
    if m is not None:
        found.append((m.start(), m.group("call") or m.group("name").replace(" ", "")))
    for s in _SYSCALL.finditer(code):
        if s.group("args") is None or not _HARMLESS_SYSCALLS.match(s.group("nr").strip()):
            nr = (s.group("nr") or "").strip()
            found.append((s.start(), f"syscall({nr}, ...)" if nr else "syscall"))
            break
    asm = _asm_entering_kernel(_code_only(text, literals=True))
    if asm is not None:
        found.append((asm, "a system call in inline assembly"))
    if not found:
        return ""
    start, what = min(found)
    line = code.count("\n", 0, start) + 1
    return (f"calls {what} (line {line}): changing memory protection, raw system calls and "
            f"looking up symbols are no part of a kernel program (they could reach device "
            f"memory from host code)")


def allowed_files(task: Task) -> set[str]:
    return {f"data/{t.name}.bin" for t in [*task.inputs, *task.outputs]}


def static_reasons(text: str, task: Task, launches: int, features: list[str]) -> list[str]:
    reasons = [no_kernel_launch(text, launches, features), hardcoded_table(text),
               literal_file_paths(text, allowed_files(task)), protection_tampering(text)]
    return [r for r in reasons if r]


# --- dynamic ---------------------------------------------------------------------------------

_PROC_MEM = re.compile(r"^/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/+mem$")
_SONAME = re.compile(r"^[\w.+-]+\.so(?:\.\d+)*$")
_PSEUDO = re.compile(r"^\[[\w.-]+\]$")


def read_access_log(workdir: Path) -> list[tuple[str, str]] | None:
    path = workdir / ACCESS_LOG
    try:
        text = read_no_follow(path, root=workdir, max_bytes=1 << 22).decode("utf-8", "replace")
    except OSError:
        return None
    entries = []
    for line in text.splitlines():
        kind, _, target = line.partition("\t")
        if kind in ("r", "w", "rw", "d", "net", "call"):
            entries.append((kind, target))
    return entries


def access_reasons(entries: list[tuple[str, str]] | None, workdir: Path, task: Task,
                   extra_allowed: tuple[str, ...] = (), extra_reads: tuple[str, ...] = (),
                   extra_removes: tuple[str, ...] = ()) -> list[str]:
    """Forbidden accesses and inputs never opened, from the shim's log. `extra_allowed`:
    prefixes outside the work folder the runtime opens; `extra_reads`: files in it (relative)
    the runtime may read; `extra_removes`: prefixes outside it where the runtime may remove."""
    if entries is None:
        return []
    allowed = allowed_files(task)
    read_only = {f"data/{t.name}.bin": t.name for t in task.inputs if t.read_only}
    work = os.path.realpath(workdir)
    opened: set[str] = set()
    reasons = []
    for kind, target in entries:
        if kind == "net":
            reasons.append(f"opened a network socket ({target})")
            continue
        if kind == "call":
            reasons.append(f"called {target}: changing memory protection or reaching into the "
                           f"process's own memory past it is no part of a kernel program (host "
                           f"code could reach device memory)")
            continue
        if kind == "r" and (_SONAME.match(target) or _PSEUDO.match(target)):
            # A shared library by soname (the loader, sanitizers; the vDSO is
            # `linux-vdso.so.1`) or a mapping name like `[vdso]`: not a data file.
            continue
        norm = target if target.startswith("/") else os.path.join(work, target)
        norm = os.path.normpath(norm)
        verb = "removed or renamed" if kind == "d" else "opened"
        if kind != "d" and _PROC_MEM.match(norm):
            reasons.append(f"opened {target}: it reads and writes the process's memory past its "
                           f"protection (host code could reach device memory)")
            continue
        if norm.startswith(work + os.sep):
            rel = os.path.relpath(norm, work)
            if rel in read_only and kind in ("w", "rw", "d"):
                # Refused by the sandbox (the file is root's, 0444), but the attempt is the cheat.
                reasons.append(f"read-only input {read_only[rel]} was modified ({rel})")
                continue
            if rel in allowed:  # removing one's own output is harmless; inputs are hashed
                if kind != "d":
                    opened.add(rel)
                continue
            if rel in RUNTIME_FILES or (kind == "r" and rel in extra_reads):
                continue
            reasons.append(f"{verb} a file other than its inputs and outputs: {target}")
        elif norm == work:
            continue
        elif kind != "d" and (norm.startswith(ALLOWED_PREFIXES) or norm.startswith(extra_allowed)):
            continue
        elif kind == "d" and extra_removes and norm.startswith(extra_removes):
            continue
        else:
            reasons.append(f"{verb} a file outside its work directory: {target}")
    for t in task.inputs:
        if f"data/{t.name}.bin" not in opened:
            reasons.append(f"never read input {t.name} (data/{t.name}.bin): outputs cannot depend on it")
    out: list[str] = []
    for r in reasons:  # keep order, drop repeats
        if r not in out:
            out.append(r)
    return out[:5] + ([f"and {len(out) - 5} more such access(es)"] if len(out) > 5 else [])


# --- outputs -----------------------------------------------------------------------------------

def degenerate_output(name: str, out: np.ndarray, ref: np.ndarray) -> str:
    """Constant or all-zero output where the reference is not constant."""
    if out.size < 2 or ref.size < 2:
        return ""
    r = ref.ravel()
    ref_constant = bool(np.all((r == r[0]) | (np.isnan(r) & np.isnan(r[0]))))
    if ref_constant:
        return ""
    o = out.ravel()
    if np.all(o == 0):
        return f"output {name} is all zeros while the reference is not"
    if np.all(o == o[0]):
        return f"output {name} is constant ({o[0].item()!r}) while the reference is not"
    return ""


def input_digests(workdir: Path, task: Task) -> dict[str, str]:
    import hashlib

    out = {}
    for t in task.inputs:
        p = workdir / "data" / f"{t.name}.bin"
        try:
            out[t.name] = hashlib.sha256(read_no_follow(p, root=workdir)).hexdigest()
        except OSError:
            out[t.name] = "missing"
    return out


def modified_inputs(before: dict[str, str], workdir: Path, task: Task) -> list[str]:
    after = input_digests(workdir, task)
    return [f"read-only input {t.name} was modified (data/{t.name}.bin)"
            for t in task.inputs if t.read_only and before.get(t.name) != after.get(t.name)]
