"""A small C launcher for the `namespaces+uid` sandbox mode (built once with gcc, cached).

It does with system calls, in one process tree of three, what the portable shell set-up in
`validators.sandbox` does with a dozen `mount` processes: set rlimits, unshare the mount,
PID, IPC, UTS (and network) namespaces, cover and expose directories, then fork the program
as the sandbox uid with `no_new_privs`. Start-up falls from tens of milliseconds to a few,
which matters because every case runs several times. Without gcc the shell path is used.

Exit status contract (same as the shell path): the program's exit code, 128 + signal when a
signal killed it, and 125 with a `ckd-sandbox-setup-failed:` line on stderr when the set-up
itself failed.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

from schemas import CompileInfo

LAUNCHER_SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXP 16
static const char *work, *preload;
static const char *hide[MAXP], *expose[MAXP];
static int nhide, nexpose, net = 1, report_fd = -1;
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

int main(int argc, char **argv) {
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) { i++; break; }
    if (i + 1 >= argc) { fprintf(stderr, "ckd-launch: %s needs a value\n", a); return 125; }
    const char *v = argv[++i];
    unsigned long long n = strtoull(v, NULL, 10);
    if (!strcmp(a, "--work")) work = v;
    else if (!strcmp(a, "--uid")) uid = (unsigned)n;
    else if (!strcmp(a, "--net")) net = (int)n;
    else if (!strcmp(a, "--preload")) preload = v;
    else if (!strcmp(a, "--report-fd")) {  /* where init writes the program's peak RSS */
      report_fd = (int)n;
      if (fcntl(report_fd, F_SETFD, FD_CLOEXEC) != 0) die("report fd", v);
    }
    else if (!strcmp(a, "--hide") && nhide < MAXP) hide[nhide++] = v;
    else if (!strcmp(a, "--expose") && nexpose < MAXP) expose[nexpose++] = v;
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
    else { fprintf(stderr, "ckd-launch: unknown option %s\n", a); return 125; }
  }
  if (!work || i >= argc || uid == 0) { fprintf(stderr, "ckd-launch: usage error\n"); return 125; }
  limit(RLIMIT_CORE, 0, 0);
  if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | (net ? 0 : CLONE_NEWNET)) != 0)
    die("unshare", NULL);
  pid_t init = fork();
  if (init < 0) die("fork", NULL);
  if (init > 0) {  /* outside: relay the status of the namespace's init */
    int st;
    while (waitpid(init, &st, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  /* PID 1 of the new namespace: dies with the launcher; everything here dies with it. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);  /* (getppid() is 0 here: the parent is outside) */
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) die("make-private", "/");
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) die("mount proc", NULL);
  if (mount(work, work, NULL, MS_BIND, NULL)) die("bind", work);
  int efd[MAXP], wfd;
  for (int k = 0; k < nexpose; k++)
    if ((efd[k] = open(expose[k], O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) die("open", expose[k]);
  if ((wfd = open(work, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) die("open", work);
  mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);  /* best effort */
  int holds[MAXP];
  for (int h = 0; h < nhide; h++) {
    holds[h] = under(work, hide[h]);
    for (int k = 0; k < nexpose; k++) holds[h] |= under(expose[k], hide[h]);
    if (mount("ckd-hidden", hide[h], "tmpfs", MS_NOSUID | MS_NODEV | (holds[h] ? 0 : MS_RDONLY),
              "size=64k,mode=755")) die("cover", hide[h]);
  }
  char fdpath[64];
  for (int k = 0; k <= nexpose; k++) {  /* the work directory last: a parent must not cover it */
    const char *p = k < nexpose ? expose[k] : work;
    int fd = k < nexpose ? efd[k] : wfd;
    mkdirs(p);
    snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
    if (mount(fdpath, p, NULL, MS_BIND, NULL)) die("bind", p);
    if (k < nexpose && mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL)) die("read-only", p);
    close(fd);
  }
  for (int h = 0; h < nhide; h++)
    if (holds[h] && mount(NULL, hide[h], NULL, MS_REMOUNT | MS_RDONLY, NULL)) die("read-only", hide[h]);
  if (chdir(work)) die("chdir", work);
  pid_t prog = fork();
  if (prog < 0) die("fork", NULL);
  if (prog == 0) {
    if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid)) die("drop to uid", NULL);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) die("no_new_privs", NULL);
    if (preload) setenv("LD_PRELOAD", preload, 1);
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
"""


def launcher_path() -> Path | None:
    """The built launcher (cached in the build cache), or None when gcc is missing or fails.

    Memoised per cache root, and rebuilt if the file went away (a cache directory removed
    while this process runs)."""
    from .build_cache import cache_root

    path = _launcher(str(cache_root()))
    if path is not None and not path.exists():
        _launcher.cache_clear()
        path = _launcher(str(cache_root()))
    return path


@functools.cache
def _launcher(root: str) -> Path | None:
    from .build_cache import BuildCache

    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    version = subprocess.run([gcc, "--version"], capture_output=True, text=True).stdout
    key = BuildCache.key(kind="sandbox-launcher", source=LAUNCHER_SOURCE, compiler=version)

    def build(tmp: Path) -> CompileInfo:
        (tmp / "launch.c").write_text(LAUNCHER_SOURCE)
        cmd = [gcc, "-O2", "-Wall", "-o", "ckd-launch", "launch.c"]
        out = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=120)
        (tmp / "launch.c").unlink()
        return CompileInfo(compiler="gcc", command=cmd, ok=out.returncode == 0,
                           diagnostics=out.stderr[-2000:])

    path, _ = BuildCache(Path(root) / "builds").get_or_build(key, build, artifact="ckd-launch")
    return path
