/*
 * log.c: leveled, greppable logging to stderr. The level comes from
 * log_init() and may be raised by MPIV_LOG=debug|info|warn|error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "log.h"

static const char *log_prog = "mpiv";
static enum log_level log_level = LOG_LEVEL_INFO;

static const char *const log_names[] = { "error", "warn", "info", "debug" };

int
log_parse_level(const char *s, enum log_level *out)
{
	for (int i = 0; i <= LOG_LEVEL_DEBUG; i++) {
		if (strcmp(s, log_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -1;
}

void
log_init(const char *progname, enum log_level level)
{
	const char *env = getenv("MPIV_LOG");
	enum log_level l;

	log_prog = progname;
	log_level = level;
	if (env != NULL && log_parse_level(env, &l) == 0)
		log_level = l;
}

void
log_set_level(enum log_level level)
{
	log_level = level;
}

enum log_level
log_get_level(void)
{
	return log_level;
}

/* Formats one line; `err` >= 0 appends its strerror. */
static void
log_vemit(enum log_level lvl, int err, const char *fmt, va_list ap)
{
	char msg[2048];
	struct timeval tv;
	struct tm tm;

	if (lvl > log_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	if (err >= 0)
		fprintf(stderr, "%02d:%02d:%02d.%03ld %s %s: %s: %s\n", tm.tm_hour,
		    tm.tm_min, tm.tm_sec, (long)(tv.tv_usec / 1000), log_prog,
		    log_names[lvl], msg, strerror(err));
	else
		fprintf(stderr, "%02d:%02d:%02d.%03ld %s %s: %s\n", tm.tm_hour,
		    tm.tm_min, tm.tm_sec, (long)(tv.tv_usec / 1000), log_prog,
		    log_names[lvl], msg);
}

#define LOG_BODY(lvl, err)                     \
	do {                                   \
		va_list ap;                    \
		va_start(ap, fmt);             \
		log_vemit((lvl), (err), fmt, ap); \
		va_end(ap);                    \
	} while (0)

void log_warn(const char *fmt, ...) { int e = errno; LOG_BODY(LOG_LEVEL_WARN, e); }
void log_warnx(const char *fmt, ...) { LOG_BODY(LOG_LEVEL_WARN, -1); }
void log_info(const char *fmt, ...) { LOG_BODY(LOG_LEVEL_INFO, -1); }
void log_debug(const char *fmt, ...) { LOG_BODY(LOG_LEVEL_DEBUG, -1); }
void log_errorx(const char *fmt, ...) { LOG_BODY(LOG_LEVEL_ERROR, -1); }

void
fatal(const char *fmt, ...)
{
	int e = errno;
	LOG_BODY(LOG_LEVEL_ERROR, e);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_ERROR, -1);
	exit(1);
}
