/*
 * tp_open.c: a rank's connections to the Channel Memories of its job
 * opened (dial, Hello, the home CM's NdLog), closed at MPI_Finalize, and,
 * in a checkpoint clone restored on another node or later, opened again
 * as the new incarnation. The frames that then flow are transport.c's.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth_client.h"
#include "mono.h"
#include "net.h"
#include "direct.h"
#include "proto.h"
#include "tp_priv.h"
#include "transport.h"

/* ---------------- setup and teardown ---------------- */

int
mpiv_tp_ncms(void)
{
	return tp_nconns;
}

int
mpiv_tp_home(int world_rank)
{
	return world_rank % tp_nconns;
}

bool
mpiv_tp_mcast(int cm)
{
	return cm >= 0 && cm < tp_nconns && tp_conns[cm].mcast &&
	    !tp_conns[cm].is_peer;
}

uint64_t
mpiv_tp_last_seq(int dst)
{
	if (tp_last_seq == NULL || dst < 0 || dst >= tp_world_size)
		return 0;
	return tp_last_seq[dst];
}

/* Dials addr, retrying briefly while the CM may still be starting. */
static int
tp_dial(const char *addr)
{
	long deadline = mono_us() + TP_DIAL_MS * 1000L;
	int fd;

	for (;;) {
		fd = net_dial(addr, 2000);
		if (fd >= 0 || mono_us() > deadline)
			return fd;
		usleep(100 * 1000);
	}
}

/*
 * Right after HelloReply the home CM sends the outcomes this rank logged
 * in earlier incarnations: NdLog chunks, the last one with last = true
 * (always at least one). They are all read before MPI_Init returns.
 */
static int
tp_read_ndlog(struct tp_conn *c, char *err, size_t errlen)
{
	long deadline = mono_us() + TP_HELLO_MS * 1000L;

	for (;;) {
		ProtobufCMessage *m = NULL;
		uint8_t *payload = NULL;
		const char *ferr = NULL;
		struct frame_hdr h;
		long left = (deadline - mono_us()) / 1000;
		bool last;

		if (left <= 0 || frame_read_s(&c->seal, c->fd, &h, &m, &payload,
		    (int)left, &ferr) < 0) {
			snprintf(err, errlen, "home CM %s did not send the "
			    "replay log (nd_log) within %d s: %s", c->addr,
			    TP_HELLO_MS / 1000, left <= 0 || errno == ETIMEDOUT ?
			    "timed out" : ferr != NULL ? ferr : strerror(errno));
			return -1;
		}
		free(payload);
		if (h.type == MPIV__MSG_TYPE__MSG_ERROR) {
			const Mpiv__Error *e = (const Mpiv__Error *)m;

			snprintf(err, errlen, "home CM %s: %s", c->addr,
			    e->text && *e->text ? e->text : "(no text)");
			frame_free_meta(m);
			return -1;
		}
		if (h.type != MPIV__MSG_TYPE__MSG_ND_LOG) {
			snprintf(err, errlen, "home CM %s sent %s instead of "
			    "nd_log", c->addr, frame_type_name(h.type));
			frame_free_meta(m);
			return -1;
		}
		last = ((Mpiv__NdLog *)m)->last;
		if (mpiv_ndlog_load((Mpiv__NdLog *)m) < 0) {
			frame_free_meta(m);
			snprintf(err, errlen, "out of memory for the replay log");
			return -1;
		}
		if (last)
			return 0;
	}
}

/* Hello / HelloReply on a freshly dialled connection. */
static int
tp_hello(struct tp_conn *c, const char *job, int rank, uint32_t incarnation,
    bool home, char *err, size_t errlen)
{
	Mpiv__Hello hello = MPIV__HELLO__INIT;
	Mpiv__HelloReply *rep;
	ProtobufCMessage *m = NULL;
	char name[128], why[320];

	hello.version = FRAME_VERSION;
	hello.role = MPIV__ROLE__ROLE_RANK;
	hello.job_id = (char *)job;
	hello.rank = rank;
	hello.incarnation = incarnation;
	hello.resume_event = tp_resume_event;
	hello.resume_nd = tp_resume_nd;
	if (home)
		hello.replay_window = mpiv_ahead_window();
	if (dp_active)
		hello.listen_addr = dp_listen_addr;
	if (gethostname(name, sizeof(name)) == 0) {
		name[sizeof(name) - 1] = '\0';
		hello.name = name;
	}
	if (auth_client_hello(c->fd, tp_keyed ? &tp_key : NULL, &hello,
	    &c->seal, TP_HELLO_MS, &rep, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "CM %s: %s", c->addr, why);
		return -1;
	}
	m = &rep->base;
	if (rep->ok) {
		char who[48];

		snprintf(who, sizeof(who), "rank %d incarnation %u", rank,
		    incarnation);
		auth_client_trace(who, c->addr, c->seal.on ?
		    c->seal.tx.cipher : SEAL_NONE);
	}
	if (!rep->ok) {
		snprintf(err, errlen, "CM %s refused rank %d: %s", c->addr,
		    rank, rep->error && *rep->error ? rep->error : "(no reason)");
		tp_restore_needed |= rep->restore_needed;
		tp_refused_fenced = rep->code == MPIV__ERROR_CODE__ERR_FENCED;
		frame_free_meta(m);
		return -1;
	}
	/* last_seq is indexed by receiver rank, for the receivers this CM
	   serves; keep the highest seen for silent re-execution. */
	if (c->index == 0 && rep->fin_closed) {
		tp_fin_closed = true;
		tp_fin_code = rep->fin_exit_code;
	}
	for (size_t i = 0; i < rep->n_last_seq && i < (size_t)tp_world_size; i++)
		if (rep->last_seq[i] > tp_last_seq[i])
			tp_last_seq[i] = rep->last_seq[i];
	if (home)
		tp_log_events = rep->log_events;
	c->mcast = rep->multicast;
	frame_free_meta(m);
	return home ? tp_read_ndlog(c, err, errlen) : 0;
}

/* Dials CM c and says Hello (as the home rank when home). 0, or -1
   with err (c->fd stays open for the caller to close). */
static int
tp_connect(struct tp_conn *c, const char *job, int rank, uint32_t inc,
    bool home, char *err, size_t errlen)
{
	if ((c->fd = tp_dial(c->addr)) < 0) {
		snprintf(err, errlen, "cannot reach CM %s: %s", c->addr,
		    strerror(errno));
		return -1;
	}
	return tp_hello(c, job, rank, inc, home, err, errlen);
}

/* The connections' table, the sequences and the job id go. */
static void
tp_free_state(void)
{
	free(tp_conns);
	free(tp_last_seq);
	free(tp_job);
	tp_job = NULL;
	tp_conns = NULL;
	tp_last_seq = NULL;
	tp_nconns = 0;
}

bool
mpiv_tp_restore_needed(void)
{
	return tp_restore_needed;
}

bool
mpiv_tp_fin_closed(void)
{
	return tp_fin_closed;
}

int
mpiv_tp_fin_code(void)
{
	return tp_fin_code;
}

int
mpiv_tp_open(const char *cms, const char *job, int rank, int size,
    uint32_t incarnation, char *err, size_t errlen)
{
	char *list, *tok, *save = NULL;
	const char *key;
	int n = 1, i;

	for (const char *p = cms; *p; p++)
		if (*p == ',')
			n++;
	tp_world_size = size;
	tp_rank = rank;
	tp_incarnation = incarnation;
	if ((key = getenv(AUTH_ENV_RANK)) != NULL) {
		uint8_t k[AUTH_HASH_LEN];

		if (auth_unhex(key, k, sizeof(k)) < 0) {
			snprintf(err, errlen, "%s is not %u hex digits",
			    AUTH_ENV_RANK, 2 * AUTH_HASH_LEN);
			return -1;
		}
		auth_key_set(&tp_key, k, sizeof(k));
		auth_wipe(k, sizeof(k));
		tp_keyed = true;
		/* Programs the rank starts have no business with it, and
		   its checkpoint images keep no copy: the string is wiped
		   where it lies (the initial environment, which
		   unsetenv leaves in memory). */
		auth_wipe((char *)key, strlen(key));
		(void)unsetenv(AUTH_ENV_RANK);
	}
	free(tp_job);
	tp_job = strdup(job);
	tp_last_event = 0;
	tp_resume_event = tp_resume_nd = 0;
	tp_log_events = 0;
	tp_conns = calloc((size_t)n, sizeof(*tp_conns));
	tp_last_seq = calloc((size_t)size, sizeof(*tp_last_seq));
	list = strdup(cms);
	if (tp_conns == NULL || tp_last_seq == NULL || list == NULL ||
	    tp_job == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out_free;
	}
	tp_nconns = 0;
	for (tok = strtok_r(list, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		struct tp_conn *c = &tp_conns[tp_nconns];

		c->index = tp_nconns;
		c->fd = -1;
		snprintf(c->addr, sizeof(c->addr), "%s", tok);
		tp_nconns++;
	}
	if (tp_nconns == 0) {
		snprintf(err, errlen, "MPIV_CMS lists no Channel Memory");
		goto out_free;
	}
	for (i = 0; i < tp_nconns; i++) {
		struct tp_conn *c = &tp_conns[i];

		if (tp_connect(c, job, rank, incarnation, i == rank % tp_nconns,
		    err, errlen) < 0)
			goto out_close;
		c->incap = TP_IN_CAP;
		if ((c->in = malloc(c->incap)) == NULL) {
			snprintf(err, errlen, "out of memory");
			goto out_close;
		}
	}
	free(list);
	tp_err = NULL;
	return 0;

out_close:
	for (i = 0; i < tp_nconns; i++) {
		if (tp_conns[i].fd >= 0)
			close(tp_conns[i].fd);
		seal_end(&tp_conns[i].seal);
		free(tp_conns[i].in);
	}
out_free:
	free(list);
	tp_free_state();
	return -1;
}

/*
 * Finalize: queue Bye everywhere, flush, then half-close and drain until
 * the CM closes (bounded), so that unread input never turns the close
 * into a reset that could drop our last bytes.
 */
void
mpiv_tp_close(int exit_code)
{
	Mpiv__Bye bye = MPIV__BYE__INIT;
	long deadline;
	int i;

	bye.exit_code = exit_code;
	if (tp_err == NULL) {
		for (i = 0; i < tp_nconns; i++)
			mpiv_tp_send(i, MPIV__MSG_TYPE__MSG_BYE, &bye.base, NULL,
			    0, NULL, NULL);
		mpiv_tp_flush();
	}
	for (i = 0; i < tp_nconns; i++)
		if (!tp_conns[i].dead)
			shutdown(tp_conns[i].fd, SHUT_WR);
	deadline = mono_us() + 1000 * 1000L;
	for (i = 0; i < tp_nconns; i++) {
		struct tp_conn *c = &tp_conns[i];
		uint8_t sink[4096];

		while (!c->dead) {
			struct pollfd p = { .fd = c->fd, .events = POLLIN };
			long left = (deadline - mono_us()) / 1000;
			ssize_t n;

			if (left <= 0 || poll(&p, 1, (int)left) <= 0)
				break;
			n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EINTR &&
			    errno != EAGAIN))
				break;
		}
	}
	for (i = 0; i < tp_nconns; i++) {
		struct tp_conn *c = &tp_conns[i];
		struct tp_frame *f, *next;

		close(c->fd);
		seal_end(&c->seal);
		for (f = c->qhead; f != NULL; f = next) {
			next = f->next;
			tp_frame_put(f);
		}
		if (c->meta != NULL)
			frame_free_meta(c->meta);
		free(c->in);
	}
	while (tp_frame_pool != NULL) {
		struct tp_frame *f = tp_frame_pool;

		tp_frame_pool = f->next;
		free(f);
	}
	tp_free_state();
}

/* ---------------- checkpoints ---------------- */

int
mpiv_tp_send_now(int cm, uint16_t type, const ProtobufCMessage *m)
{
	struct tp_conn *c;
	int rc;

	if (cm < 0 || cm >= tp_nconns)
		return MPI_ERR_INTERN;
	c = &tp_conns[cm];
	if ((rc = tp_send(cm, type, m, NULL, 0, NULL, NULL, false)) !=
	    MPI_SUCCESS)
		return rc;
	while (tp_conn_out_due(c) && !c->dead) {
		struct pollfd p = { .fd = c->fd, .events = POLLOUT };

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return MPI_ERR_INTERN;
		if (tp_write(c) < 0)
			return MPI_ERR_PROC_FAILED;
	}
	return tp_err != NULL ? MPI_ERR_PROC_FAILED : MPI_SUCCESS;
}

void
mpiv_tp_clone_detach(void)
{
	for (int i = 0; i < tp_nconns; i++) {
		if (tp_conns[i].fd >= 0)
			close(tp_conns[i].fd);
		tp_conns[i].fd = -1;
		/* The parent's session keys stay out of the image: the
		   restored clone makes sessions of its own. */
		seal_end(&tp_conns[i].seal);
	}
}

/* Forgets whatever c was in the middle of, in and out. */
static void
tp_reset_conn(struct tp_conn *c)
{
	struct tp_frame *f, *next;

	if (c->in_payload && c->preq != NULL && c->preq->tmp != NULL) {
		free(c->preq->tmp);
		c->preq->tmp = NULL;
	}
	if (c->meta != NULL)
		frame_free_meta(c->meta);
	c->meta = NULL;
	c->preq = NULL;
	c->pahead = NULL;
	c->pdst = NULL;
	c->in_payload = false;
	c->pkeep = c->pgot = c->prest = 0;
	c->inpos = c->inlen = 0;
	for (f = c->qhead; f != NULL; f = next) {
		next = f->next;
		tp_frame_put(f);
	}
	c->qhead = c->qtail = c->utail = NULL;
	c->nurgent = 0;
	c->dead = false;
	seal_end(&c->seal);	/* a new handshake makes a new session */
}

int
mpiv_tp_set_key(const char *hex)
{
	uint8_t k[AUTH_HASH_LEN];

	if (strlen(hex) != 2 * AUTH_HASH_LEN ||
	    auth_unhex(hex, k, sizeof(k)) < 0)
		return -1;
	auth_key_set(&tp_key, k, sizeof(k));	/* clears the old one first */
	auth_wipe(k, sizeof(k));
	tp_keyed = true;
	return 0;
}

int
mpiv_tp_reopen(uint32_t incarnation, uint64_t resume_event,
    uint64_t resume_nd, char *err, size_t errlen)
{
	int i, home = tp_rank % tp_nconns;

	tp_resume_event = resume_event;
	tp_resume_nd = resume_nd;
	tp_incarnation = incarnation;
	mpiv_ahead_reset();	/* empty at a checkpoint anyway (ckpt.c) */
	for (i = 0; i < tp_nconns; i++) {
		struct tp_conn *c = &tp_conns[i];

		tp_reset_conn(c);
		if (c->fd >= 0)
			close(c->fd);
		c->fd = -1;
	}
	for (i = 0; i < tp_nconns; i++) {
		struct tp_conn *c = &tp_conns[i];

		if (tp_connect(c, tp_job, tp_rank, incarnation, i == home, err,
		    errlen) < 0) {
			if (tp_refused_fenced)
				tp_fenced(c, err);
			goto fail;
		}
	}
	return 0;

fail:
	for (i = 0; i < tp_nconns; i++)
		if (tp_conns[i].fd < 0)
			tp_conns[i].dead = true;
	return -1;
}
