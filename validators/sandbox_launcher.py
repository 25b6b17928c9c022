"""A small C launcher for the `namespaces+uid` sandbox mode (built once with gcc, cached).

It does with system calls, in one process tree of three, what the portable shell set-up in
`validators.sandbox` does with a dozen `mount` processes: set rlimits, unshare the mount,
PID, IPC, UTS (and network) namespaces, cover and expose directories, then fork the program
as the sandbox uid with `no_new_privs`. Start-up falls from tens of milliseconds to a few,
which matters because every case runs several times. Without gcc the shell path is used.

Exit status contract (same as the shell path): the program's exit code, 128 + signal when a
signal killed it, and 125 with a `ckd-sandbox-setup-failed:` line on stderr when the set-up
itself failed. A program can exit 125 with that line too, so the set-up's failure is believed
only when the report descriptor lacks the `exec` line the set-up writes there as its last step
(`validators.sandbox`): the program never holds that descriptor.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

from schemas import CompileInfo

_LAUNCHER_TEMPLATE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXP 64
static const char *work, *cwd, *preload, *tmp_opts = "size=64m,nr_inodes=4096,mode=1777";
static const char *ro[MAXP], *dev[MAXP], *link_at[MAXP], *link_to[MAXP], *hide[MAXP];
static int nro, ndev, nlink, nhide, net = 1, report_fd = -1, use_seccomp = 1, allowlist = 1, loopback = 0;
static unsigned uid;

static void die(const char *what, const char *arg) {
  fprintf(stderr, "ckd-sandbox-setup-failed: %s %s: %s\n", what, arg ? arg : "", strerror(errno));
  _exit(125);
}

static void limit(int res, unsigned long long soft, unsigned long long hard) {
  struct rlimit r = {soft, hard};
  if (setrlimit(res, &r) != 0) die("setrlimit", NULL);
}

static void mkdirs(const char *path) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') { *p = 0; mkdir(buf, 0755); *p = '/'; }
  mkdir(buf, 0755);
}

static int under(const char *path, const char *dir) {
  size_t n = strlen(dir);
  return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* Bind the object behind fd (opened before the host tree was left) at root+path. */
static void bind_fd(int fd, const char *root, const char *path, int dir, unsigned long flags) {
  char dst[4200], src[64];
  snprintf(dst, sizeof dst, "%s%s", root, path);
  if (dir) mkdirs(dst);
  else {
    char parent[4200];
    snprintf(parent, sizeof parent, "%s", dst);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) { *slash = 0; mkdirs(parent); }
    int f = open(dst, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (f >= 0) close(f);
  }
  snprintf(src, sizeof src, "/proc/self/fd/%d", fd);
  if (mount(src, dst, NULL, MS_BIND, NULL)) die("bind", path);
  if (flags && mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | flags, NULL)) die("remount", path);
}

/* --- seccomp: an allow-list (the lists are generated from SYSCALLS_* in Python) ------------- */
#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define ERR(e) RET(SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define ALLOW RET(SECCOMP_RET_ALLOW)

static struct sock_filter filt[2048];
static int nf;
static void put(struct sock_filter f) {
  if (nf >= (int)(sizeof filt / sizeof *filt)) { errno = E2BIG; die("seccomp filter size", NULL); }
  filt[nf++] = f;
}
#define END (-1L)  /* ends each list (a C array may not be empty): no call, no command */
static void answer(long nr, struct sock_filter ret) {  /* if nr == this: ret */
  if (nr == END) return;
  put((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1));
  put(ret);
}
static const long allowed[] = {
@ALLOW@
};
static const long eperm[] = {
@EPERM@
};
static const long enosys[] = {
@ENOSYS@
};
static const long noop[] = {
@NOOP@
};
static const long fcntl_ok[] = {
@FCNTL_OK@
};
static const long fcntl_noop[] = {
@FCNTL_NOOP@
};
static const long fcntl_eperm[] = {
@FCNTL_EPERM@
};
#define EACH(arr, k) for (size_t k = 0; k < sizeof arr / sizeof *arr; k++)

/* Linear, but cheap: since Linux 5.11 the kernel caches, per system call, "always allowed
   whatever the arguments" and skips the filter for those; only clone, socket and fcntl (their
   arguments are read) and the refused calls run it. */
static void install_seccomp(void) {
  put((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
  put((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
  put((struct sock_filter)RET(SECCOMP_RET_KILL_PROCESS));  /* i386 / other ABIs */
  put((struct sock_filter)LD_NR);
  put((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));  /* x32 */
  put((struct sock_filter)ERR(ENOSYS));
  EACH(eperm, k) answer(eperm[k], (struct sock_filter)ERR(EPERM));
  EACH(enosys, k) answer(enosys[k], (struct sock_filter)ERR(ENOSYS));
  EACH(noop, k) answer(noop[k], (struct sock_filter)ERR(0));
  /* clone: no new namespaces */
  put((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
  put((struct sock_filter)LD_ARG(0));
  put((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
      CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP, 0, 1));
  put((struct sock_filter)ERR(EPERM));
  put((struct sock_filter)ALLOW);
  /* socket / socketpair: local (AF_UNIX) only, unless the run has the network */
  put((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 1, 0));
  put((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socketpair, 0, 0));  /* jf patched */
  int sock_skip = nf - 1;
  if (net) put((struct sock_filter)ALLOW); else put((struct sock_filter)LD_ARG(0));
  if (loopback) {  /* its own network namespace: internet families reach only its loopback */
    put((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 3, 0));
    put((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 2, 0));
  }
  put((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 1, 0));
  put((struct sock_filter)ERR(EAFNOSUPPORT));
  put((struct sock_filter)ALLOW);
  filt[sock_skip].jf = (unsigned char)(nf - sock_skip - 1);
  put((struct sock_filter)LD_NR);
  /* fcntl: by command. Unknown commands get EINVAL, as from a kernel that lacks them. */
  put((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fcntl, 1, 0));
  put((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0));  /* patched: to the list */
  int skip = nf - 1;
  put((struct sock_filter)LD_ARG(1));
  EACH(fcntl_ok, k) answer(fcntl_ok[k], (struct sock_filter)ALLOW);
  EACH(fcntl_noop, k) answer(fcntl_noop[k], (struct sock_filter)ERR(0));
  EACH(fcntl_eperm, k) answer(fcntl_eperm[k], (struct sock_filter)ERR(EPERM));
  put((struct sock_filter)ERR(EINVAL));
  filt[skip].k = (unsigned)(nf - skip - 1);
  put((struct sock_filter)LD_NR);
  EACH(allowed, k) answer(allowed[k], (struct sock_filter)ALLOW);
  /* Anything else: "this kernel has no such call", which libraries expect of a new call and
     answer by falling back (glibc: clone3 -> clone, statx -> fstatat, rseq -> none). */
  put((struct sock_filter)ERR(ENOSYS));
  struct sock_fprog prog = {(unsigned short)nf, filt};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) die("seccomp", NULL);
}

/* as_library: the zygote's child calls this (`ckd_enter`) instead of exec'ing the launcher;
   the program's process returns 0 into its caller (an interpreter that already imported what
   every run needs) where the launcher would exec, and the other two never return. */
static int launch(int argc, char **argv, int as_library) {
  int i = 1;
  prctl(PR_SET_PDEATHSIG, SIGKILL);  /* the validator died: so does the run */
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) { i++; break; }
    if (i + 1 >= argc) { fprintf(stderr, "ckd-launch: %s needs a value\n", a); return 125; }
    const char *v = argv[++i];
    unsigned long long n = strtoull(v, NULL, 10);
    if (!strcmp(a, "--work")) work = v;
    else if (!strcmp(a, "--cwd")) cwd = v;  /* a folder under --work the program starts in */
    else if (!strcmp(a, "--uid")) uid = (unsigned)n;
    else if (!strcmp(a, "--net")) net = (int)n;
    else if (!strcmp(a, "--loopback")) loopback = (int)n;
    else if (!strcmp(a, "--seccomp")) use_seccomp = (int)n;
    else if (!strcmp(a, "--allowlist")) allowlist = (int)n;
    else if (!strcmp(a, "--preload")) preload = v;
    else if (!strcmp(a, "--tmp-opts")) tmp_opts = v;
    else if (!strcmp(a, "--report-fd")) {  /* where init writes the program's peak RSS */
      report_fd = (int)n;
      if (fcntl(report_fd, F_SETFD, FD_CLOEXEC) != 0) die("report fd", v);
    }
    else if (!strcmp(a, "--ro") && nro < MAXP) ro[nro++] = v;
    else if (!strcmp(a, "--hide") && nhide < MAXP) hide[nhide++] = v;
    else if (!strcmp(a, "--dev") && ndev < MAXP) dev[ndev++] = v;  /* SOURCE=NAME under /dev */
    else if (!strcmp(a, "--symlink") && nlink < MAXP) {  /* PATH=TARGET */
      char *eq = strchr(v, '=');
      if (!eq) { fprintf(stderr, "ckd-launch: --symlink needs PATH=TARGET\n"); return 125; }
      link_at[nlink] = strndup(v, (size_t)(eq - v));
      link_to[nlink++] = eq + 1;
    }
    else if (!strcmp(a, "--cgroup-procs")) {  /* join a (memory) cgroup before forking */
      int fd = open(v, O_WRONLY | O_CLOEXEC);
      char pid[32];
      int len = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
      if (fd < 0 || write(fd, pid, len) != len) die("join cgroup", v);
      close(fd);
    }
    else if (!strcmp(a, "--cpu")) limit(RLIMIT_CPU, n, n + 1);
    else if (!strcmp(a, "--as")) limit(RLIMIT_AS, n, n);
    else if (!strcmp(a, "--fsize")) limit(RLIMIT_FSIZE, n, n);
    else if (!strcmp(a, "--nproc")) limit(RLIMIT_NPROC, n, n);
    else if (!strcmp(a, "--nofile")) limit(RLIMIT_NOFILE, n, n);
    else { fprintf(stderr, "ckd-launch: unknown option %s\n", a); return 125; }
  }
  if (!work || i >= argc || uid == 0) { fprintf(stderr, "ckd-launch: usage error\n"); return 125; }
  if (as_library && preload) { fprintf(stderr, "ckd-launch: no preload in a zygote's run\n"); _exit(125); }
  limit(RLIMIT_CORE, 0, 0);
  if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | (net ? 0 : CLONE_NEWNET)) != 0)
    die("unshare", NULL);
  if (!net && loopback) {  /* a fresh namespace's lo is down: up, for tools that talk to their target */
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) != 0) die("loopback", "lo");
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) die("loopback up", "lo");
    close(s);
  }
  pid_t init = fork();
  if (init < 0) die("fork", NULL);
  if (init > 0) {  /* outside: relay the status of the namespace's init */
    int st;
    while (waitpid(init, &st, 0) < 0 && errno == EINTR) {}
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (as_library) _exit(code);
    return code;
  }
  /* PID 1 of the new namespace: dies with the launcher; everything here dies with it. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) die("make-private", "/");
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) die("mount proc", NULL);
  int wfd = open(work, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (wfd < 0) die("open", work);
  if (allowlist) {
    /* A new root on a tmpfs holding only what the configuration names. Every source is opened
       first: the staging tmpfs then covers /tmp, where the work directory may live. */
    int rofd[MAXP], devfd[MAXP], rodir[MAXP];
    for (int k = 0; k < nro; k++) {
      struct stat st;
      if ((rofd[k] = open(ro[k], O_PATH | O_CLOEXEC)) < 0) die("open", ro[k]);
      if (fstat(rofd[k], &st)) die("stat", ro[k]);
      rodir[k] = S_ISDIR(st.st_mode);
    }
    int devdir[MAXP];
    const char *devname[MAXP];
    for (int k = 0; k < ndev; k++) {
      char p[4200];
      const char *eq = strchr(dev[k], '=');
      if (!eq) die("--dev wants SOURCE=NAME", dev[k]);
      snprintf(p, sizeof p, "%.*s", (int)(eq - dev[k]), dev[k]);
      devname[k] = eq + 1;
      if ((devfd[k] = open(p, O_PATH | O_CLOEXEC)) < 0) die("open", p);
      /* A folder (nvidia-caps) is bound as a folder: binding it onto a file fails. */
      struct stat st;
      if (fstat(devfd[k], &st)) die("stat", p);
      devdir[k] = S_ISDIR(st.st_mode);
    }
    const char *R = "/tmp";
    if (mount("ckd-root", R, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=755")) die("mount root", R);
    char p[4200];
    snprintf(p, sizeof p, "%s/tmp", R); mkdirs(p);
    if (mount("ckd-tmp", p, "tmpfs", MS_NOSUID | MS_NODEV, tmp_opts)) die("mount", "/tmp");
    snprintf(p, sizeof p, "%s/dev", R); mkdirs(p);
    if (mount("ckd-dev", p, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,nr_inodes=256,mode=755")) die("mount", "/dev");
    for (int k = 0; k < ndev; k++) {
      char name[300];
      snprintf(name, sizeof name, "/dev/%s", devname[k]);
      bind_fd(devfd[k], R, name, devdir[k], 0);
    }
    snprintf(p, sizeof p, "%s/dev/shm", R); mkdirs(p);
    if (mount("ckd-shm", p, "tmpfs", MS_NOSUID | MS_NODEV, tmp_opts)) die("mount", "/dev/shm");
    const char *fdlinks[][2] = {{"fd", "/proc/self/fd"}, {"stdin", "/proc/self/fd/0"},
                                {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}};
    for (int k = 0; k < 4; k++) {
      snprintf(p, sizeof p, "%s/dev/%s", R, fdlinks[k][0]);
      if (symlink(fdlinks[k][1], p)) die("symlink", p);
    }
    for (int k = 0; k < nro; k++)
      bind_fd(rofd[k], R, ro[k], rodir[k], MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOATIME);
    for (int k = 0; k < nlink; k++) {
      char p[4200];
      snprintf(p, sizeof p, "%s%s", R, link_at[k]);
      if (symlink(link_to[k], p)) die("symlink", link_at[k]);
    }
    bind_fd(wfd, R, work, 1, 0);
    snprintf(p, sizeof p, "%s/proc", R); mkdirs(p);
    if (mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) die("mount proc", p);
    if (chdir(R)) die("chdir", R);
    if (syscall(SYS_pivot_root, ".", ".")) die("pivot_root", R);
    if (umount2(".", MNT_DETACH)) die("detach old root", NULL);
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL)) die("read-only", "/");
  } else {
    /* Deny-list view (the old behaviour): the host's / read-only with some directories covered. */
    int efd[MAXP];
    for (int k = 0; k < nro; k++)
      if ((efd[k] = open(ro[k], O_PATH | O_CLOEXEC)) < 0) die("open", ro[k]);
    if (mount(work, work, NULL, MS_BIND, NULL)) die("bind", work);
    close(wfd);  /* the work folder's own (writable) mount, not the root's about to turn ro */
    if ((wfd = open(work, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) die("open", work);
    mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);
    int holds[MAXP];
    for (int h = 0; h < nhide; h++) {
      holds[h] = under(work, hide[h]);
      for (int k = 0; k < nro; k++) holds[h] |= under(ro[k], hide[h]);
      if (mount("ckd-hidden", hide[h], "tmpfs", MS_NOSUID | MS_NODEV | (holds[h] ? 0 : MS_RDONLY),
                "size=64k,mode=755")) die("cover", hide[h]);
    }
    for (int k = 0; k < nro; k++) { bind_fd(efd[k], "", ro[k], 1, MS_RDONLY); close(efd[k]); }
    bind_fd(wfd, "", work, 1, 0);
    for (int h = 0; h < nhide; h++)
      if (holds[h] && mount(NULL, hide[h], NULL, MS_REMOUNT | MS_RDONLY, NULL)) die("read-only", hide[h]);
  }
  if (chdir(work)) die("chdir", work);
  if (cwd && chdir(cwd)) die("chdir", cwd);
  pid_t prog = fork();
  if (prog < 0) die("fork", NULL);
  if (prog == 0) {
    if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid)) die("drop to uid", NULL);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) die("no_new_privs", NULL);
    if (preload) setenv("LD_PRELOAD", preload, 1);
    if (use_seccomp) install_seccomp();
    /* The last step of the set-up: from here on every status and every line on stderr may be
       the program's (it can print the set-up's words and exit 125 too). So the set-up says it
       is done on init's report pipe, which the program never holds (O_CLOEXEC here; closed
       below in a zygote's run): no "exec" line there means it never ran. */
    if (report_fd >= 0 && write(report_fd, "exec\n", 5) != 5) die("report", NULL);
    if (as_library) {
      /* No exec closes the set-up's O_CLOEXEC descriptors (the exposed paths, opened before
         pivot_root: from one, openat(.., "..") would walk the host's tree), nor init's report
         descriptor: every descriptor past the standard three goes here. */
      int closed = -1;
#ifdef SYS_close_range
      closed = (int)syscall(SYS_close_range, 3U, ~0U, 0U);
#endif
      if (closed != 0)
        for (int fd = 3; fd < 65536; fd++) close(fd);
      return 0;
    }
    execvp(argv[i], argv + i);
    fprintf(stderr, "ckd-launch: cannot execute %s: %s\n", argv[i], strerror(errno));
    _exit(127);
  }
  for (;;) {  /* reap everything; report the program's own status */
    int st;
    pid_t got = wait(&st);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) _exit(125);
    if (got == prog) {
      /* The launcher's own peak RSS includes its parent's at fork (exec keeps the pre-exec
         high-water mark), so the program's figure comes from here: init's children are the
         program and its orphans, forked from this small process. */
      struct rusage ru;
      if (report_fd >= 0 && getrusage(RUSAGE_CHILDREN, &ru) == 0) {
        char line[64];
        int len = snprintf(line, sizeof line, "maxrss_kb %ld\n", ru.ru_maxrss);
        if (write(report_fd, line, len) != len) {}
      }
      _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    }
  }
}

#ifdef CKD_LIBRARY
int ckd_enter(int argc, char **argv) { return launch(argc, argv, 1); }
#else
int main(int argc, char **argv) { return launch(argc, argv, 0); }
#endif
"""


# --- the system-call filter ------------------------------------------------------------------
# An allow-list: a call not named here fails with ENOSYS (see `install_seccomp`). Measured with
# `benchmarks/measure_syscalls.py` against the built-in tasks with their references, the
# acceptance corpus, the HeCBench programs and the sandbox's own tests; each group below adds
# what glibc, libstdc++, OpenMP, ASan, CPython/NumPy/torch and the CUDA driver are known to call
# beyond that. A name this machine's headers lack is left out of the build (`#ifdef`).
SYSCALLS_ALLOWED: dict[str, tuple[str, ...]] = {
    # Reading and writing descriptors the run already holds or opens below.
    "io": ("read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev",
           "preadv2", "pwritev2", "lseek", "close", "close_range", "dup", "dup2", "dup3",
           "pipe", "pipe2", "sendfile", "splice", "tee", "copy_file_range", "fsync",
           "fdatasync", "sync_file_range", "ftruncate", "truncate", "fallocate", "fadvise64",
           # terminals, FIONREAD, and the CUDA driver's whole interface to /dev/nvidia*
           "ioctl"),
    # Waiting on descriptors; event, signal and timer descriptors (Python's asyncio, torch).
    "wait": ("poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1",
             "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd", "eventfd2",
             "signalfd", "signalfd4", "timerfd_create", "timerfd_settime", "timerfd_gettime"),
    # The file system, confined by the mount namespace and the uid (what it can name is the
    # allow-list view; what it can change is its work folder, /tmp and /dev/shm).
    "files": ("open", "openat", "openat2", "creat", "stat", "fstat", "lstat", "newfstatat",
              "statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2", "readlink",
              "readlinkat", "getdents", "getdents64", "getcwd", "chdir", "fchdir", "mkdir",
              "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2",
              "link", "linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat",
              "fchmodat2", "chown", "fchown", "lchown", "fchownat", "umask", "utime", "utimes",
              "utimensat", "futimesat", "mknod", "mknodat", "getxattr", "lgetxattr",
              "fgetxattr", "listxattr", "llistxattr", "flistxattr", "setxattr", "lsetxattr",
              "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "memfd_create"),
    # Memory of its own address space (NUMA policy: OpenMP and torch ask; CUDA pins host memory).
    "memory": ("brk", "mmap", "munmap", "mprotect", "mremap", "madvise", "msync", "mincore",
               "mlock", "mlock2", "munlock", "mlockall", "munlockall", "membarrier",
               "pkey_alloc", "pkey_free", "pkey_mprotect", "mbind", "get_mempolicy",
               "set_mempolicy"),
    # Processes and threads inside its PID namespace (clone is checked for namespace flags
    # separately; clone3's flags are out of a filter's reach, so it gets ENOSYS).
    "processes": ("fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4",
                  "waitid", "kill", "tkill", "tgkill", "getpid", "getppid", "gettid", "getuid",
                  "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
                  "setpgid", "getpgid", "getpgrp", "getsid", "setsid", "prctl", "arch_prctl",
                  "set_tid_address", "set_robust_list", "get_robust_list", "rseq", "futex",
                  "futex_waitv", "futex_wake", "futex_wait", "futex_requeue", "sched_yield",
                  "sched_getaffinity", "sched_setaffinity", "sched_getparam", "sched_setparam",
                  "sched_getscheduler", "sched_setscheduler", "sched_get_priority_max",
                  "sched_get_priority_min", "sched_rr_get_interval", "sched_getattr",
                  "sched_setattr", "getpriority", "setpriority", "getrlimit", "setrlimit",
                  "prlimit64", "getrusage", "times", "sysinfo", "uname", "getcpu", "capget",
                  "personality", "ioprio_get", "ioprio_set", "pidfd_open", "pidfd_send_signal",
                  "restart_syscall"),
    # Signals.
    "signals": ("rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending",
                "rt_sigtimedwait", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "rt_sigsuspend",
                "sigaltstack", "pause", "alarm", "getitimer", "setitimer"),
    # Clocks (read only; the vDSO answers most without a system call) and timers.
    "time": ("clock_gettime", "clock_getres", "gettimeofday", "time", "nanosleep",
             "clock_nanosleep", "timer_create", "timer_settime", "timer_gettime",
             "timer_getoverrun", "timer_delete"),
    # Sockets once made (socket and socketpair are checked for AF_UNIX separately); the network
    # namespace has only its own loopback.
    "sockets": ("bind", "connect", "listen", "accept", "accept4", "getsockname", "getpeername",
                "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown",
                "setsockopt", "getsockopt"),
    # System V and POSIX IPC, private to the run's IPC namespace (Python multiprocessing).
    "ipc": ("shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl",
            "msgget", "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend",
            "mq_timedreceive", "mq_notify", "mq_getsetattr"),
    "random": ("getrandom",),
}

SYSCALLS_EPERM: tuple[str, ...] = (
    # Refused by name with EPERM (a clearer answer than ENOSYS for what a program may try on
    # purpose): other processes' memory, mounts and namespaces, keys, bpf, perf, modules,
    # clocks, swap, quotas, syslog, file handles (open_by_handle_at reaches any file of a
    # mounted file system), notification of other runs' file use (inotify, fanotify).
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "process_mrelease",
    "pidfd_getfd", "kcmp", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
    "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "kexec_load",
    "kexec_file_load", "init_module", "finit_module", "delete_module", "swapon", "swapoff",
    "reboot", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "iopl", "ioperm",
    "acct", "quotactl", "quotactl_fd", "userfaultfd", "open_by_handle_at",
    "name_to_handle_at", "lookup_dcookie", "syslog", "vhangup", "uselib", "sysfs",
    "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark",
)
SYSCALLS_ENOSYS: tuple[str, ...] = (
    # io_uring performs file operations no filter sees; clone3's flags (namespaces) cannot be
    # inspected: glibc falls back to clone on ENOSYS.
    "io_uring_setup", "io_uring_enter", "io_uring_register", "clone3",
)
SYSCALLS_NOOP: tuple[str, ...] = (
    # A lock on a shared read-only file would be a channel between concurrent runs: it
    # succeeds and does nothing (fcntl's record locks likewise, below).
    "flock",
)
FCNTL_ALLOWED: tuple[str, ...] = (
    "F_DUPFD", "F_DUPFD_CLOEXEC", "F_GETFD", "F_SETFD", "F_GETFL", "F_SETFL", "F_GETLK",
    "F_OFD_GETLK", "F_SETOWN", "F_GETOWN", "F_SETSIG", "F_GETSIG", "F_SETOWN_EX",
    "F_GETOWN_EX", "F_GETOWNER_UIDS", "F_SETPIPE_SZ", "F_GETPIPE_SZ", "F_ADD_SEALS",
    "F_GET_SEALS", "F_GET_RW_HINT", "F_SET_RW_HINT", "F_GET_FILE_RW_HINT",
    "F_SET_FILE_RW_HINT",
)
FCNTL_NOOP: tuple[str, ...] = ("F_SETLK", "F_SETLKW", "F_OFD_SETLK", "F_OFD_SETLKW")
FCNTL_EPERM: tuple[str, ...] = (
    # Directory notifications (F_NOTIFY) signal a run when another opens or reads in a shared
    # folder, and leases (F_SETLEASE, F_GETLEASE) when another opens a shared file: both are
    # channels between concurrent runs.
    "F_NOTIFY", "F_SETLEASE", "F_GETLEASE",
)


def syscall_policy(name: str) -> str:
    """What the filter answers to a call (by its name without `SYS_`): `allow`, `eperm`,
    `enosys`, `no-op`, `by arguments` (clone, socket, socketpair, fcntl) or `enosys (not
    listed)`."""
    if name in ("clone", "socket", "socketpair", "fcntl"):
        return "by arguments"
    if any(name in group for group in SYSCALLS_ALLOWED.values()):
        return "allow"
    for answer, names in (("eperm", SYSCALLS_EPERM), ("enosys", SYSCALLS_ENOSYS),
                          ("no-op", SYSCALLS_NOOP)):
        if name in names:
            return answer
    return "enosys (not listed)"


def _c_list(names: list[str] | tuple[str, ...], prefix: str) -> str:
    # `#ifdef`: headers older than the kernel lack the newest calls (the filter then answers
    # ENOSYS for them, as the kernel of those headers would).
    return "\n".join(f"#ifdef {prefix}{n}\n  {prefix}{n},\n#endif" for n in names)


def _launcher_source() -> str:
    allowed = [n for group in SYSCALLS_ALLOWED.values() for n in group]
    parts = {"@ALLOW@": _c_list(allowed, "SYS_"), "@EPERM@": _c_list(SYSCALLS_EPERM, "SYS_"),
             "@ENOSYS@": _c_list(SYSCALLS_ENOSYS, "SYS_"), "@NOOP@": _c_list(SYSCALLS_NOOP, "SYS_"),
             "@FCNTL_OK@": _c_list(FCNTL_ALLOWED, ""), "@FCNTL_NOOP@": _c_list(FCNTL_NOOP, ""),
             "@FCNTL_EPERM@": _c_list(FCNTL_EPERM, "")}
    text = _LAUNCHER_TEMPLATE
    for key, value in parts.items():
        text = text.replace(key, value + "\n  END")
    return text


LAUNCHER_SOURCE = _launcher_source()


def launcher_path() -> Path | None:
    """The built launcher (cached in the build cache), or None when gcc is missing or fails.

    Memoised per cache root, and rebuilt if the file went away (a cache directory removed
    while this process runs)."""
    return _built(library=False)


def library_path() -> Path | None:
    """The same set-up as a shared library (`ckd_enter`) for a zygote's children
    (`validators.zygote`), or None when gcc is missing or fails."""
    return _built(library=True)


def _built(*, library: bool) -> Path | None:
    from .build_cache import cache_root

    path = _launcher(str(cache_root()), library)
    if path is not None and not path.exists():
        _launcher.cache_clear()
        path = _launcher(str(cache_root()), library)
    return path


@functools.cache
def _launcher(root: str, library: bool = False) -> Path | None:
    from .build_cache import BuildCache

    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    version = subprocess.run([gcc, "--version"], capture_output=True, text=True).stdout
    artifact = "libckd-launch.so" if library else "ckd-launch"
    key = BuildCache.key(kind="sandbox-launcher", source=LAUNCHER_SOURCE, compiler=version,
                         **({"library": "1"} if library else {}))

    def build(tmp: Path) -> CompileInfo:
        (tmp / "launch.c").write_text(LAUNCHER_SOURCE)
        shared = ["-shared", "-fPIC", "-DCKD_LIBRARY"] if library else []
        cmd = [gcc, "-O2", "-Wall", *shared, "-o", artifact, "launch.c"]
        out = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=120)
        (tmp / "launch.c").unlink()
        return CompileInfo(compiler="gcc", command=cmd, ok=out.returncode == 0,
                           diagnostics=out.stderr[-2000:])

    path, _ = BuildCache(Path(root) / "builds").get_or_build(key, build, artifact=artifact)
    return path
