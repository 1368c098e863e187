// SPDX-License-Identifier: MIT
/* itest.c - a real pvnetd for the C integration tests: start, stop, ask for status */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/ctlmsg.h"
#include "itest.h"

/* Arguments pvnetd gets at most: ours plus a few from the test. */
#define ITEST_MAX_ARGS 16

int itest_start(struct itest *t, const char *pvnetd, const char *name, ...)
{
	const char *argv[ITEST_MAX_ARGS + 1] = {"pvnetd", "--run-dir", t->run_dir, "--log-level",
						"debug"};
	unsigned int argc = 5;
	char logpath[PATH_MAX], sock[PATH_MAX];
	const char *a;
	va_list ap;

	snprintf(t->run_dir, sizeof(t->run_dir), "/tmp/pvnet-test-%s-XXXXXX", name);
	if (!mkdtemp(t->run_dir))
		return -1;
	va_start(ap, name);
	while ((a = va_arg(ap, const char *)) && argc < ITEST_MAX_ARGS)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	snprintf(logpath, sizeof(logpath), "%s.log", t->run_dir);
	t->pid = fork();
	if (t->pid < 0)
		return -1;
	if (t->pid == 0) {
		int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		/*
		 * A test that dies (a failed assertion's abort, meson's timeout)
		 * takes its pvnetd with it, stopped or not, instead of leaving it
		 * running on its run directory.
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
			_exit(126);
		dup2(fd, 2);
		execv(pvnetd, (char *const *)argv);
		_exit(127);
	}
	/* pvnetd renames its control socket into place once it listens. */
	snprintf(sock, sizeof(sock), "%s/pvnetd.sock", t->run_dir);
	for (int i = 0; i < 500; i++) {
		if (access(sock, F_OK) == 0)
			return 0;
		usleep(10000);
	}
	return -1;
}

int itest_stop(struct itest *t)
{
	char logpath[PATH_MAX];
	int st = 0;

	kill(t->pid, SIGTERM);
	waitpid(t->pid, &st, 0);
	snprintf(logpath, sizeof(logpath), "%s.log", t->run_dir);
	rmdir(t->run_dir);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "pvnetd exited badly (status %#x); log in %s\n", st, logpath);
		return -1;
	}
	unlink(logpath);
	return 0;
}

int itest_ctl_open(const struct itest *t)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	assert_true(strlen(t->run_dir) + sizeof("/pvnetd.sock") <= sizeof(sa.sun_path));
	memcpy(sa.sun_path, t->run_dir, strlen(t->run_dir));
	strcat(sa.sun_path, "/pvnetd.sock");
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

json_t *itest_status(const struct itest *t)
{
	json_t *req = json_pack("{s:s}", "op", "status"), *reply = NULL;
	int fd = itest_ctl_open(t);

	assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL), 0);
	json_decref(req);
	close(fd);
	return reply;
}

long long itest_status_get(const struct itest *t, const char *a, const char *b)
{
	json_t *s = itest_status(t);
	long long v = json_integer_value(json_object_get(json_object_get(s, a), b));

	json_decref(s);
	return v;
}

int itest_run_pvnetv(const char *pvnet, const char *run_dir, const char *out, const char *err,
		     va_list ap)
{
	const char *argv[8] = {"pvnet", "-d", run_dir};
	unsigned int argc = 3;
	const char *a;
	pid_t pid;
	int st;

	while ((a = va_arg(ap, const char *)) && argc < 7)
		argv[argc++] = a;
	argv[argc] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execv(pvnet, (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
