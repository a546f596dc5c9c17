/*
 * Logging for every mpiv daemon and tool: greppable key=value lines on
 * stderr, prefixed with time, program name and level.
 *
 *   log_warn()  appends strerror(errno), log_warnx() does not;
 *   fatal()/fatalx() log and exit(1).
 */
#ifndef MPIV_LOG_H
#define MPIV_LOG_H

#include <stdarg.h>

enum log_level { LOG_LEVEL_ERROR = 0, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

void log_init(const char *progname, enum log_level level);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
int  log_parse_level(const char *s, enum log_level *out);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_errorx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#define log_debug_enabled() (log_get_level() >= LOG_LEVEL_DEBUG)

#endif
