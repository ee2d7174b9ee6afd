/*
 * clockshim: an LD_PRELOAD library that steps a process's wall clock.
 *
 * It replaces gettimeofday, time and clock_gettime for the realtime
 * clocks (CLOCK_REALTIME, CLOCK_REALTIME_COARSE); the monotonic clocks are
 * left alone, as when NTP or an operator steps a machine's wall clock. The
 * offset, in microseconds, is the int64 at the start of the file named by
 * TOLLGATE_CLOCK_FILE, mapped shared: the test changes it while the
 * process runs (redisserver.Server.StepClock).
 *
 * It reads the kernel's clock by the raw system call, never through libc
 * (whose symbols it replaces) or dlsym (which may allocate, and an
 * allocator may read the clock): nothing it calls can call it again.
 * libfaketime's file-driven offsets would do the same, but its
 * initialisation recurses under redis-server's jemalloc and the process
 * does not start.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int64_t *offset_us;

__attribute__((constructor)) static void clockshim_init(void) {
	const char *path = getenv("TOLLGATE_CLOCK_FILE");
	if (path == NULL) {
		return;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return;
	}
	void *p = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p != MAP_FAILED) {
		offset_us = (volatile int64_t *)p;
	}
}

static int64_t offset(void) {
	return offset_us ? __atomic_load_n(offset_us, __ATOMIC_ACQUIRE) : 0;
}

static int realtime(clockid_t id) {
	return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE;
}

static void shift(struct timespec *ts, int64_t us) {
	int64_t ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + us * 1000;
	ts->tv_sec = ns / 1000000000;
	ts->tv_nsec = ns % 1000000000;
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += 1000000000;
		ts->tv_sec--;
	}
}

int clock_gettime(clockid_t id, struct timespec *ts) {
	int r = (int)syscall(SYS_clock_gettime, id, ts);
	if (r == 0 && realtime(id)) {
		shift(ts, offset());
	}
	return r;
}

int gettimeofday(struct timeval *tv, void *tz) {
	struct timespec ts;
	int r = (int)syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
	if (r != 0) {
		return r;
	}
	shift(&ts, offset());
	if (tv != NULL) {
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	(void)tz;
	return 0;
}

time_t time(time_t *t) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (t != NULL) {
		*t = ts.tv_sec;
	}
	return ts.tv_sec;
}
