/*
 * disp_load: N simulated idle node agents in one process, against a
 * running dispatcher (its CPU and memory per node).
 *
 *   disp_load --dispatcher HOST:PORT -n N [--pid DISPATCHER_PID]
 *             [--secret-file FILE] [--interval S] [--duration S]
 *             [--idle S] [--hold S] [--slots K]
 *
 * Each simulated node opens its own TCP connection and registers the way
 * an agent does (node-agent/node.c): the connection handshake of
 * runtime/auth.h (Challenge, Hello{ROLE_NODE} with its proof of K_node
 * when a secret is given, HelloReply), then NodeRegister, then it waits
 * for the NodeWelcome. Registrations are sequential and blocking; while
 * they go on, the nodes already registered keep heartbeating. Then every
 * node sends a Heartbeat every --interval s (1) from its registration on,
 * for --duration s (15); one thread, epoll, every echo the dispatcher
 * sends back is read and counted (after a 0.3 s pause that lets the
 * last echoes arrive).
 *
 * With --pid, samples the dispatcher's CPU time (utime + stime from
 * /proc/PID/stat, and the ns of /proc/PID/schedstat) and VmRSS at: the
 * start and end of an idle period (--idle s, 2) before any connection,
 * after the last registration, and at the end of the heartbeat phase.
 * Prints "REGISTERED n=N" once every node is in, then one line
 *   RESULT n=... registered=... reg_s=... ... (key=value)
 * after the heartbeat phase, and keeps heartbeating for --hold s (60) or
 * until SIGTERM/SIGINT (the driver checks `mpiv status` meanwhile), then
 * closes everything. Exit 0, or 1 if a node could not register or a
 * connection was closed by the dispatcher.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "auth_client.h"
#include "frame.h"
#include "net.h"

#define IO_TIMEOUT_MS 10000

struct sim {
	int fd;
	struct seal seal;	/* the connection's session (seal.h) */
	bool dead;
	double next_hb;		/* monotonic s */
	uint64_t seq;
	/* reader: header bytes so far, then body bytes left to skip */
	uint8_t hdr[FRAME_HDR_LEN];
	size_t nhdr;
	uint64_t skip;
	uint16_t type;
};

struct sample {
	double t;		/* monotonic s */
	double cpu_s;		/* utime + stime */
	double sched_s;		/* schedstat run time */
	long rss_kb;
};

static volatile sig_atomic_t stop_flag;
static uint64_t hb_sent, hb_echoed, other_frames, send_fail, closed;

static void
on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
take_sample(int pid, struct sample *s)
{
	char path[64], buf[4096], *p;
	unsigned long ut = 0, st = 0;
	unsigned long long ns = 0;
	FILE *f;
	size_t n;

	memset(s, 0, sizeof(*s));
	s->t = now_s();
	s->cpu_s = s->sched_s = -1;
	s->rss_kb = -1;
	if (pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((f = fopen(path, "r")) != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
		/* fields after the command (which may hold spaces) */
		if ((p = strrchr(buf, ')')) != NULL &&
		    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
		    "%*u %lu %lu", &ut, &st) == 2)
			s->cpu_s = (double)(ut + st) / sysconf(_SC_CLK_TCK);
	}
	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	if ((f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%llu", &ns) == 1)
			s->sched_s = ns / 1e9;
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if ((f = fopen(path, "r")) != NULL) {
		while (fgets(buf, sizeof(buf), f) != NULL)
			if (sscanf(buf, "VmRSS: %ld", &s->rss_kb) == 1)
				break;
		fclose(f);
	}
}

static double
self_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void
sim_close(struct sim *s, int ep, bool by_peer)
{
	if (s->fd < 0)
		return;
	epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
	close(s->fd);
	seal_end(&s->seal);
	s->fd = -1;
	s->dead = true;
	if (by_peer)
		closed++;
}

/*
 * One simulated agent's registration. Returns the fd, or -1 with the
 * reason printed.
 */
static int
sim_register(const char *disp, const struct auth_keys *keys, int i,
    int slots, struct seal *seal)
{
	Mpiv__Hello h = MPIV__HELLO__INIT;
	Mpiv__NodeRegister nr = MPIV__NODE_REGISTER__INIT;
	Mpiv__HelloReply *hr;
	ProtobufCMessage *m;
	struct frame_hdr fh;
	uint8_t *payload;
	const char *ferr = NULL;
	char name[32], why[600];
	int fd;

	snprintf(name, sizeof(name), "load%05d", i);
	if ((fd = net_dial(disp, IO_TIMEOUT_MS)) < 0) {
		fprintf(stderr, "disp_load: node %d: dial %s: %s\n", i, disp,
		    strerror(errno));
		return -1;
	}
	h.version = FRAME_VERSION;
	h.role = MPIV__ROLE__ROLE_NODE;
	h.rank = -1;
	h.name = name;
	if (auth_client_hello(fd, keys->enabled ? &keys->node : NULL, &h,
	    seal, IO_TIMEOUT_MS, &hr, why, sizeof(why)) < 0) {
		fprintf(stderr, "disp_load: node %d: %s\n", i, why);
		close(fd);
		return -1;
	}
	if (!hr->ok) {
		fprintf(stderr, "disp_load: node %d refused: %s\n", i,
		    hr->error);
		frame_free_meta(&hr->base);
		close(fd);
		return -1;
	}
	frame_free_meta(&hr->base);
	nr.name = name;
	nr.slots = slots;
	nr.criu = false;
	nr.version = (char *)"disp_load";
	if (frame_write_s(seal, fd, MPIV__MSG_TYPE__MSG_NODE_REGISTER,
	    &nr.base, NULL, 0, IO_TIMEOUT_MS) < 0) {
		fprintf(stderr, "disp_load: node %d: NodeRegister: %s\n", i,
		    strerror(errno));
		close(fd);
		return -1;
	}
	if (frame_read_s(seal, fd, &fh, &m, &payload, IO_TIMEOUT_MS,
	    &ferr) < 0) {
		fprintf(stderr, "disp_load: node %d: no NodeWelcome: %s\n", i,
		    ferr != NULL ? ferr : strerror(errno));
		close(fd);
		return -1;
	}
	free(payload);
	if (fh.type != MPIV__MSG_TYPE__MSG_NODE_WELCOME) {
		fprintf(stderr, "disp_load: node %d: got %s, not NodeWelcome\n",
		    i, frame_type_name(fh.type));
		frame_free_meta(m);
		close(fd);
		return -1;
	}
	frame_free_meta(m);
	return fd;
}

static void
sim_heartbeat(struct sim *s, int ep)
{
	Mpiv__Heartbeat hb = MPIV__HEARTBEAT__INIT;
	uint8_t buf[64];
	size_t n, off = 0;
	ssize_t w;

	hb.seq = ++s->seq;
	if (s->seal.on) {
		if (frame_write_s(&s->seal, s->fd,
		    MPIV__MSG_TYPE__MSG_HEARTBEAT, &hb.base, NULL, 0,
		    1000) == 0) {
			hb_sent++;
			return;
		}
		send_fail++;
		sim_close(s, ep, true);
		return;
	}
	n = frame_encode_into(MPIV__MSG_TYPE__MSG_HEARTBEAT, &hb.base, 0, buf,
	    sizeof(buf));
	while (n > 0 && off < n) {
		w = write(s->fd, buf + off, n - off);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			/* a full socket buffer for a 20-byte frame: wait */
			struct pollfd pfd = { .fd = s->fd, .events = POLLOUT };
			if (poll(&pfd, 1, 1000) == 1)
				continue;
		}
		break;
	}
	if (n > 0 && off == n) {
		hb_sent++;
		return;
	}
	send_fail++;
	sim_close(s, ep, true);
}

/* Reads what the dispatcher sent (heartbeat echoes), frame by frame. */
static void
sim_read(struct sim *s, int ep)
{
	uint8_t buf[4096];
	ssize_t r;

	for (;;) {
		r = s->seal.on ? seal_read(&s->seal, s->fd, buf, sizeof(buf)) :
		    read(s->fd, buf, sizeof(buf));
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
			sim_close(s, ep, true);
			return;
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (size_t off = 0; off < (size_t)r;) {
			if (s->skip > 0) {
				size_t k = (size_t)r - off;
				if (k > s->skip)
					k = (size_t)s->skip;
				s->skip -= k;
				off += k;
				continue;
			}
			s->hdr[s->nhdr++] = buf[off++];
			if (s->nhdr == FRAME_HDR_LEN) {
				struct frame_hdr h;
				const char *err;
				if (frame_parse_header(s->hdr, &h, &err) < 0) {
					fprintf(stderr, "disp_load: bad frame "
					    "from the dispatcher: %s\n", err);
					sim_close(s, ep, true);
					return;
				}
				s->nhdr = 0;
				s->skip = (uint64_t)h.meta_len + h.payload_len;
				if (h.type == MPIV__MSG_TYPE__MSG_HEARTBEAT)
					hb_echoed++;
				else
					other_frames++;
			}
		}
		/* Sealed: a read answers one record; the socket may hold
		   more, which (level-triggered) epoll says again. */
		if ((size_t)r < sizeof(buf) && !seal_readable(&s->seal))
			return;
	}
}

/* Sends every heartbeat due at now; returns the next due time. */
static double
send_due(struct sim *sims, int n, int ep, double now, double interval)
{
	double next = now + interval;

	for (int i = 0; i < n; i++) {
		struct sim *s = &sims[i];
		if (s->dead)
			continue;
		if (s->next_hb <= now) {
			sim_heartbeat(s, ep);
			/* keep the phase; skip beats missed by a stall */
			do
				s->next_hb += interval;
			while (s->next_hb <= now);
		}
		if (!s->dead && s->next_hb < next)
			next = s->next_hb;
	}
	return next;
}

/* Only reads (echoes still in flight) until until. */
static void
drain(struct sim *sims, int ep, double until)
{
	struct epoll_event evs[256];
	double now = now_s();
	int k;

	while (now < until) {
		k = epoll_wait(ep, evs, 256, (int)((until - now) * 1000) + 1);
		for (int j = 0; j < k; j++)
			sim_read(&sims[evs[j].data.u32], ep);
		now = now_s();
	}
}

/* Heartbeats and echoes until until (monotonic s) or a signal. */
static void
run_loop(struct sim *sims, int n, int ep, double until, double interval)
{
	struct epoll_event evs[256];
	double now = now_s(), next;
	int k, ms;

	while (!stop_flag && now < until) {
		next = send_due(sims, n, ep, now, interval);
		if (next > until)
			next = until;
		ms = (int)((next - now) * 1000.0 + 0.999);
		if (ms < 0)
			ms = 0;
		k = epoll_wait(ep, evs, 256, ms);
		for (int j = 0; j < k; j++)
			sim_read(&sims[evs[j].data.u32], ep);
		now = now_s();
	}
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: disp_load --dispatcher HOST:PORT -n N [--pid PID] "
	    "[--secret-file FILE]\n"
	    "                 [--interval S] [--duration S] [--idle S] "
	    "[--hold S] [--slots K]\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dispatcher", required_argument, NULL, 'd' },
		{ "duration", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "hold", required_argument, NULL, 'H' },
		{ "idle", required_argument, NULL, 'I' },
		{ "interval", required_argument, NULL, 'i' },
		{ "pid", required_argument, NULL, 'p' },
		{ "secret-file", required_argument, NULL, 'k' },
		{ "slots", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *disp = NULL, *secret = NULL;
	double interval = 1, duration = 15, idle = 2, hold = 60;
	int n = 0, pid = 0, slots = 2, ch, ep, registered = 0;
	struct auth_keys keys;
	struct sample s0, s1, s2, s3;
	struct rlimit rl;
	struct sim *sims;
	char why[600];
	double t_reg0, t_reg1, c_self0, c_self1;

	while ((ch = getopt_long(argc, argv, "d:n:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'd': disp = optarg; break;
		case 'n': n = atoi(optarg); break;
		case 'D': duration = atof(optarg); break;
		case 'H': hold = atof(optarg); break;
		case 'I': idle = atof(optarg); break;
		case 'i': interval = atof(optarg); break;
		case 'p': pid = atoi(optarg); break;
		case 'k': secret = optarg; break;
		case 's': slots = atoi(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (disp == NULL || n < 1 || interval <= 0 || duration <= 0) {
		usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	/* one fd per node, plus a few */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = rl.rlim_max;
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)n + 64)
			fprintf(stderr, "disp_load: RLIMIT_NOFILE hard limit %llu "
			    "< %d nodes\n", (unsigned long long)rl.rlim_max, n);
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (auth_load(&keys, secret, why, sizeof(why)) < 0) {
		fprintf(stderr, "disp_load: %s\n", why);
		return 2;
	}
	if ((sims = calloc((size_t)n, sizeof(*sims))) == NULL ||
	    (ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		perror("disp_load");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		sims[i].fd = -1;
		sims[i].dead = true;
	}

	take_sample(pid, &s0);
	usleep((useconds_t)(idle * 1e6));
	take_sample(pid, &s1);

	c_self0 = self_cpu_s();
	t_reg0 = now_s();
	for (int i = 0; i < n && !stop_flag; i++) {
		struct epoll_event ev = { .events = EPOLLIN };
		int fd = sim_register(disp, &keys, i, slots, &sims[i].seal);

		if (fd < 0)
			break;
		sims[i].fd = fd;
		sims[i].dead = false;
		sims[i].next_hb = now_s() + interval;
		ev.data.u32 = (uint32_t)i;
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
		registered++;
		/* the ones registered already keep beating meanwhile */
		(void)send_due(sims, i, ep, now_s(), interval);
	}
	t_reg1 = now_s();
	take_sample(pid, &s2);
	printf("REGISTERED n=%d\n", registered);
	fflush(stdout);

	uint64_t sent0 = hb_sent, echo0 = hb_echoed;
	double c_self1a = self_cpu_s();
	run_loop(sims, n, ep, now_s() + duration, interval);
	take_sample(pid, &s3);
	c_self1 = self_cpu_s();
	/* the echoes of the last beats are still on their way */
	drain(sims, ep, now_s() + 0.3);

	double dt_idle = s1.t - s0.t, dt_reg = t_reg1 - t_reg0,
	    dt_hb = s3.t - s2.t;
	uint64_t sent = hb_sent - sent0, echoed = hb_echoed - echo0;
	double cpu_idle = s1.cpu_s - s0.cpu_s, cpu_reg = s2.cpu_s - s1.cpu_s,
	    cpu_hb = s3.cpu_s - s2.cpu_s;
	double sch_idle = s1.sched_s - s0.sched_s,
	    sch_reg = s2.sched_s - s1.sched_s, sch_hb = s3.sched_s - s2.sched_s;

	printf("RESULT n=%d registered=%d reg_s=%.3f reg_per_s=%.1f "
	    "hb_s=%.3f hb_sent=%llu hb_echoed=%llu other_frames=%llu "
	    "hb_sent_total=%llu hb_echoed_total=%llu send_fail=%llu closed=%llu "
	    "idle_cpu_pct=%.2f idle_sched_pct=%.3f "
	    "reg_cpu_ms=%.0f reg_sched_ms=%.1f reg_cpu_us_per_node=%.1f "
	    "hb_cpu_ms=%.0f hb_sched_ms=%.1f hb_cpu_pct=%.2f hb_sched_pct=%.3f "
	    "cpu_us_per_hb=%.2f sched_us_per_hb=%.2f "
	    "rss0_kb=%ld rss_reg_kb=%ld rss_end_kb=%ld rss_kb_per_node=%.2f "
	    "self_reg_cpu_s=%.3f self_hb_cpu_pct=%.2f\n",
	    n, registered, dt_reg, registered / (dt_reg > 0 ? dt_reg : 1),
	    dt_hb, (unsigned long long)sent, (unsigned long long)echoed,
	    (unsigned long long)other_frames, (unsigned long long)hb_sent,
	    (unsigned long long)hb_echoed, (unsigned long long)send_fail,
	    (unsigned long long)closed,
	    100 * cpu_idle / dt_idle, 100 * sch_idle / dt_idle,
	    1000 * cpu_reg, 1000 * sch_reg,
	    registered ? 1e6 * sch_reg / registered : 0,
	    1000 * cpu_hb, 1000 * sch_hb, 100 * cpu_hb / dt_hb,
	    100 * sch_hb / dt_hb,
	    sent ? 1e6 * cpu_hb / sent : 0, sent ? 1e6 * sch_hb / sent : 0,
	    s0.rss_kb, s2.rss_kb, s3.rss_kb,
	    registered ? (double)(s3.rss_kb - s1.rss_kb) / registered : 0,
	    c_self1a - c_self0, 100 * (c_self1 - c_self1a) / dt_hb);
	fflush(stdout);

	/* keep the nodes alive while the driver looks at them */
	run_loop(sims, n, ep, now_s() + hold, interval);
	for (int i = 0; i < n; i++)
		sim_close(&sims[i], ep, false);
	auth_wipe(&keys, sizeof(keys));
	free(sims);
	return registered == n && closed == 0 ? 0 : 1;
}
