/*
 * frame.c: the wire framing shared by every mpiv piece. One table maps a
 * message type to its protobuf descriptor; every length is capped here,
 * before any allocation.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "mono.h"
#include "seal.h"

struct frame_type {
	uint16_t type;
	const char *name;
	const ProtobufCMessageDescriptor *desc;
};

static const struct frame_type frame_types[] = {
	{ MPIV__MSG_TYPE__MSG_HELLO, "hello", &mpiv__hello__descriptor },
	{ MPIV__MSG_TYPE__MSG_HELLO_REPLY, "hello_reply", &mpiv__hello_reply__descriptor },
	{ MPIV__MSG_TYPE__MSG_ERROR, "error", &mpiv__error__descriptor },
	{ MPIV__MSG_TYPE__MSG_BYE, "bye", &mpiv__bye__descriptor },
	{ MPIV__MSG_TYPE__MSG_CHALLENGE, "challenge", &mpiv__challenge__descriptor },
	{ MPIV__MSG_TYPE__MSG_SEND, "send", &mpiv__send__descriptor },
	{ MPIV__MSG_TYPE__MSG_SYNC_ACK, "sync_ack", &mpiv__sync_ack__descriptor },
	{ MPIV__MSG_TYPE__MSG_RECV_POST, "recv_post", &mpiv__recv_post__descriptor },
	{ MPIV__MSG_TYPE__MSG_DELIVER, "deliver", &mpiv__deliver__descriptor },
	{ MPIV__MSG_TYPE__MSG_PROBE, "probe", &mpiv__probe__descriptor },
	{ MPIV__MSG_TYPE__MSG_PROBE_REPLY, "probe_reply", &mpiv__probe_reply__descriptor },
	{ MPIV__MSG_TYPE__MSG_CANCEL, "cancel", &mpiv__cancel__descriptor },
	{ MPIV__MSG_TYPE__MSG_CANCEL_REPLY, "cancel_reply", &mpiv__cancel_reply__descriptor },
	{ MPIV__MSG_TYPE__MSG_JOB_SETUP, "job_setup", &mpiv__job_setup__descriptor },
	{ MPIV__MSG_TYPE__MSG_JOB_END, "job_end", &mpiv__job_end__descriptor },
	{ MPIV__MSG_TYPE__MSG_CM_STATS_REQ, "cm_stats_req", &mpiv__cm_stats_req__descriptor },
	{ MPIV__MSG_TYPE__MSG_CM_STATS, "cm_stats", &mpiv__cm_stats__descriptor },
	{ MPIV__MSG_TYPE__MSG_NODE_REGISTER, "node_register", &mpiv__node_register__descriptor },
	{ MPIV__MSG_TYPE__MSG_LAUNCH, "launch", &mpiv__launch__descriptor },
	{ MPIV__MSG_TYPE__MSG_TASK_EXIT, "task_exit", &mpiv__task_exit__descriptor },
	{ MPIV__MSG_TYPE__MSG_OUTPUT, "output", &mpiv__output__descriptor },
	{ MPIV__MSG_TYPE__MSG_KILL, "kill", &mpiv__kill__descriptor },
	{ MPIV__MSG_TYPE__MSG_JOB_SUBMIT, "job_submit", &mpiv__job_submit__descriptor },
	{ MPIV__MSG_TYPE__MSG_JOB_STATUS, "job_status", &mpiv__job_status__descriptor },
	{ MPIV__MSG_TYPE__MSG_JOB_DONE, "job_done", &mpiv__job_done__descriptor },
	{ MPIV__MSG_TYPE__MSG_SERVICE_REGISTER, "service_register", &mpiv__service_register__descriptor },
	{ MPIV__MSG_TYPE__MSG_HEARTBEAT, "heartbeat", &mpiv__heartbeat__descriptor },
	{ MPIV__MSG_TYPE__MSG_TASK_STARTED, "task_started", &mpiv__task_started__descriptor },
	{ MPIV__MSG_TYPE__MSG_ND_RECORD, "nd_record", &mpiv__nd_record__descriptor },
	{ MPIV__MSG_TYPE__MSG_ND_ACK, "nd_ack", &mpiv__nd_ack__descriptor },
	{ MPIV__MSG_TYPE__MSG_ND_LOG, "nd_log", &mpiv__nd_log__descriptor },
	{ MPIV__MSG_TYPE__MSG_REPLAY_DONE, "replay_done", &mpiv__replay_done__descriptor },
	{ MPIV__MSG_TYPE__MSG_CM_PRESSURE, "cm_pressure", &mpiv__cm_pressure__descriptor },
	{ MPIV__MSG_TYPE__MSG_WAIT_STATE, "wait_state", &mpiv__wait_state__descriptor },
	{ MPIV__MSG_TYPE__MSG_FILE_OP, "file_op", &mpiv__file_op__descriptor },
	{ MPIV__MSG_TYPE__MSG_FILE_RES, "file_res", &mpiv__file_res__descriptor },
	{ MPIV__MSG_TYPE__MSG_CKPT_MARK, "ckpt_mark", &mpiv__ckpt_mark__descriptor },
	{ MPIV__MSG_TYPE__MSG_CKPT_DURABLE, "ckpt_durable", &mpiv__ckpt_durable__descriptor },
	{ MPIV__MSG_TYPE__MSG_DIGEST_TRIM, "digest_trim", &mpiv__digest_trim__descriptor },
	{ MPIV__MSG_TYPE__MSG_FLUSH, "flush", &mpiv__flush__descriptor },
	{ MPIV__MSG_TYPE__MSG_FLUSH_ACK, "flush_ack", &mpiv__flush_ack__descriptor },
	{ MPIV__MSG_TYPE__MSG_PEER_LOOKUP, "peer_lookup", &mpiv__peer_lookup__descriptor },
	{ MPIV__MSG_TYPE__MSG_PEER_INFO, "peer_info", &mpiv__peer_info__descriptor },
	{ MPIV__MSG_TYPE__MSG_FIN_WAIT, "fin_wait", &mpiv__fin_wait__descriptor },
	{ MPIV__MSG_TYPE__MSG_FIN_GO, "fin_go", &mpiv__fin_go__descriptor },
	{ MPIV__MSG_TYPE__MSG_CKPT_REQUEST, "ckpt_request", &mpiv__ckpt_request__descriptor },
	{ MPIV__MSG_TYPE__MSG_CKPT_TAKEN, "ckpt_taken", &mpiv__ckpt_taken__descriptor },
	{ MPIV__MSG_TYPE__MSG_IMAGE_PUT, "image_put", &mpiv__image_put__descriptor },
	{ MPIV__MSG_TYPE__MSG_IMAGE_DATA, "image_data", &mpiv__image_data__descriptor },
	{ MPIV__MSG_TYPE__MSG_IMAGE_END, "image_end", &mpiv__image_end__descriptor },
	{ MPIV__MSG_TYPE__MSG_IMAGE_ACK, "image_ack", &mpiv__image_ack__descriptor },
	{ MPIV__MSG_TYPE__MSG_IMAGE_GET, "image_get", &mpiv__image_get__descriptor },
	{ MPIV__MSG_TYPE__MSG_IMAGE_INFO, "image_info", &mpiv__image_info__descriptor },
	{ MPIV__MSG_TYPE__MSG_IMAGE_GRANT, "image_grant", &mpiv__image_grant__descriptor },
	{ MPIV__MSG_TYPE__MSG_PRIV_SPAWN, "priv_spawn", &mpiv__priv_spawn__descriptor },
	{ MPIV__MSG_TYPE__MSG_PRIV_SPAWNED, "priv_spawned", &mpiv__priv_spawned__descriptor },
	{ MPIV__MSG_TYPE__MSG_PRIV_SIGNAL, "priv_signal", &mpiv__priv_signal__descriptor },
	{ MPIV__MSG_TYPE__MSG_PRIV_DUMP, "priv_dump", &mpiv__priv_dump__descriptor },
	{ MPIV__MSG_TYPE__MSG_PRIV_DUMPED, "priv_dumped", &mpiv__priv_dumped__descriptor },
	{ MPIV__MSG_TYPE__MSG_PRIV_RESTORE, "priv_restore", &mpiv__priv_restore__descriptor },
	{ MPIV__MSG_TYPE__MSG_PRIV_RESTORED, "priv_restored", &mpiv__priv_restored__descriptor },
	{ MPIV__MSG_TYPE__MSG_PRIV_EXIT, "priv_exit", &mpiv__priv_exit__descriptor },
	{ MPIV__MSG_TYPE__MSG_PRIV_KEYS, "priv_keys", &mpiv__priv_keys__descriptor },
	{ MPIV__MSG_TYPE__MSG_DSEND, "dsend", &mpiv__dsend__descriptor },
	{ MPIV__MSG_TYPE__MSG_DSYNC_ACK, "dsync_ack", &mpiv__dsync_ack__descriptor },
	{ MPIV__MSG_TYPE__MSG_DBYE, "dbye", &mpiv__dbye__descriptor },
	{ MPIV__MSG_TYPE__MSG_DTRIM, "dtrim", &mpiv__dtrim__descriptor },
	{ MPIV__MSG_TYPE__MSG_DCKPT_ASK, "dckpt_ask", &mpiv__dckpt_ask__descriptor },
	{ MPIV__MSG_TYPE__MSG_DPULL, "dpull", &mpiv__dpull__descriptor },
	{ MPIV__MSG_TYPE__MSG_DDATA, "ddata", &mpiv__ddata__descriptor },
	{ MPIV__MSG_TYPE__MSG_NODE_WELCOME, "node_welcome", &mpiv__node_welcome__descriptor },
	{ MPIV__MSG_TYPE__MSG_NODE_KILL, "node_kill", &mpiv__node_kill__descriptor },
	{ MPIV__MSG_TYPE__MSG_STATUS_REQUEST, "status_request", &mpiv__status_request__descriptor },
	{ MPIV__MSG_TYPE__MSG_STATUS_REPLY, "status_reply", &mpiv__status_reply__descriptor },
	{ MPIV__MSG_TYPE__MSG_BINARY_GET, "binary_get", &mpiv__binary_get__descriptor },
	{ MPIV__MSG_TYPE__MSG_BINARY_DATA, "binary_data", &mpiv__binary_data__descriptor },
	{ MPIV__MSG_TYPE__MSG_BINARY_END, "binary_end", &mpiv__binary_end__descriptor },
	{ MPIV__MSG_TYPE__MSG_JOB_WARNING, "job_warning", &mpiv__job_warning__descriptor },
	{ MPIV__MSG_TYPE__MSG_JOB_CANCEL, "job_cancel", &mpiv__job_cancel__descriptor },
	{ MPIV__MSG_TYPE__MSG_OUTPUT_SYNC, "output_sync", &mpiv__output_sync__descriptor },
	{ MPIV__MSG_TYPE__MSG_OUTPUT_SYNCED, "output_synced", &mpiv__output_sync__descriptor },
	{ MPIV__MSG_TYPE__MSG_JOB_EVENT, "job_event", &mpiv__job_event__descriptor },
	{ MPIV__MSG_TYPE__MSG_STORE_STATS_REQ, "store_stats_req", &mpiv__store_stats_req__descriptor },
	{ MPIV__MSG_TYPE__MSG_STORE_STATS, "store_stats", &mpiv__store_stats__descriptor },
	{ MPIV__MSG_TYPE__MSG_CS_JOBS, "cs_jobs", &mpiv__cs_jobs__descriptor },
};

static const struct frame_type *
frame_lookup(uint16_t type)
{
	for (size_t i = 0; i < sizeof(frame_types) / sizeof(frame_types[0]); i++)
		if (frame_types[i].type == type)
			return &frame_types[i];
	return NULL;
}

const ProtobufCMessageDescriptor *
frame_descriptor(uint16_t type)
{
	const struct frame_type *t = frame_lookup(type);
	return t ? t->desc : NULL;
}

const char *
frame_type_name(uint16_t type)
{
	const struct frame_type *t = frame_lookup(type);
	return t ? t->name : "unknown";
}

uint32_t
frame_max_payload(void)
{
	static uint32_t cached;
	const char *env;
	char *end;
	unsigned long long v;

	if (cached != 0)
		return cached;
	cached = FRAME_DEFAULT_MAX_PAYLOAD;
	env = getenv("MPIV_MAX_PAYLOAD");
	if (env != NULL) {
		v = strtoull(env, &end, 10);
		if (*end == '\0' && v > 0 && v <= 0xffffffffull)
			cached = (uint32_t)v;
	}
	return cached;
}

uint32_t
frame_max_payload_of(uint16_t type)
{
	uint32_t max = frame_max_payload();

	switch (type) {
	case MPIV__MSG_TYPE__MSG_SEND:
	case MPIV__MSG_TYPE__MSG_DELIVER:
	case MPIV__MSG_TYPE__MSG_DSEND:
	case MPIV__MSG_TYPE__MSG_DDATA:
		return max;
	default:
		return max < FRAME_OTHER_MAX_PAYLOAD ? max :
		    FRAME_OTHER_MAX_PAYLOAD;
	}
}

static void
put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint16_t
get_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t
get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	    ((uint32_t)p[2] << 8) | p[3];
}

void
frame_put_header(uint8_t out[FRAME_HDR_LEN], uint16_t type, uint32_t meta_len,
    uint32_t payload_len)
{
	put_be16(out, FRAME_MAGIC);
	put_be16(out + 2, type);
	put_be32(out + 4, meta_len);
	put_be32(out + 8, payload_len);
}

int
frame_parse_header(const uint8_t in[FRAME_HDR_LEN], struct frame_hdr *h,
    const char **err)
{
	if (get_be16(in) != FRAME_MAGIC) {
		*err = "bad magic (not an mpiv peer, or garbage)";
		return -1;
	}
	h->type = get_be16(in + 2);
	h->meta_len = get_be32(in + 4);
	h->payload_len = get_be32(in + 8);
	if (frame_lookup(h->type) == NULL) {
		*err = "unknown message type";
		return -1;
	}
	if (h->meta_len > FRAME_MAX_META) {
		*err = "oversized frame metadata";
		return -1;
	}
	if (h->payload_len > frame_max_payload_of(h->type)) {
		*err = "oversized frame payload";
		return -1;
	}
	return 0;
}

ProtobufCMessage *
frame_unpack_meta(uint16_t type, const uint8_t *buf, size_t len,
    const char **err)
{
	const ProtobufCMessageDescriptor *d = frame_descriptor(type);
	ProtobufCMessage *m;

	if (d == NULL) {
		*err = "unknown message type";
		return NULL;
	}
	m = protobuf_c_message_unpack(d, NULL, len, buf);
	if (m == NULL)
		*err = "malformed message";
	return m;
}

void
frame_free_meta(ProtobufCMessage *m)
{
	if (m != NULL)
		protobuf_c_message_free_unpacked(m, NULL);
}

size_t
frame_encode_into(uint16_t type, const ProtobufCMessage *m,
    uint32_t payload_len, uint8_t *out, size_t cap)
{
	const ProtobufCMessageDescriptor *d = frame_descriptor(type);
	size_t n;

	if (d == NULL || m == NULL || m->descriptor != d)
		return 0;
	n = protobuf_c_message_get_packed_size(m);
	if (n > FRAME_MAX_META || FRAME_HDR_LEN + n > cap)
		return 0;
	frame_put_header(out, type, (uint32_t)n, payload_len);
	protobuf_c_message_pack(m, out + FRAME_HDR_LEN);
	return FRAME_HDR_LEN + n;
}

uint8_t *
frame_encode(uint16_t type, const ProtobufCMessage *m, uint32_t payload_len,
    size_t *outlen)
{
	const ProtobufCMessageDescriptor *d = frame_descriptor(type);
	uint8_t *buf;
	size_t n;

	if (d == NULL || m == NULL || m->descriptor != d) {
		errno = EINVAL;
		return NULL;
	}
	n = FRAME_HDR_LEN + protobuf_c_message_get_packed_size(m);
	if ((buf = malloc(n)) == NULL)
		return NULL;
	*outlen = frame_encode_into(type, m, payload_len, buf, n);
	if (*outlen == 0) {
		free(buf);
		errno = EINVAL;
		return NULL;
	}
	return buf;
}

/* Waits for `events` on fd until the deadline (-1: forever). */
static int
frame_wait(int fd, short events, long deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int tmo, r;

	for (;;) {
		tmo = -1;
		if (deadline >= 0) {
			long left = deadline - mono_ms();
			if (left <= 0) {
				errno = ETIMEDOUT;
				return -1;
			}
			tmo = (int)left;
		}
		r = poll(&p, 1, tmo);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* Writes the rest of iov (iov[0] then iov[1]) through s. */
static int
frame_write_sealed(struct seal *s, int fd, struct iovec *iov, long deadline)
{
	int i = 0;

	while (i < 2) {
		ssize_t w;

		if (iov[i].iov_len == 0) {
			i++;
			continue;
		}
		w = seal_writev(s, fd, iov + i, 2 - i);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN || frame_wait(fd, POLLOUT,
			    deadline) < 0)
				return -1;
			continue;
		}
		for (size_t left = (size_t)w; i < 2 && left > 0; ) {
			size_t take = left < iov[i].iov_len ? left :
			    iov[i].iov_len;

			iov[i].iov_base = (char *)iov[i].iov_base + take;
			iov[i].iov_len -= take;
			left -= take;
			if (iov[i].iov_len == 0)
				i++;
		}
	}
	while (seal_pending(s) > 0) {
		if (seal_flush(s, fd) == 0)
			break;
		if (errno != EINTR && (errno != EAGAIN ||
		    frame_wait(fd, POLLOUT, deadline) < 0))
			return -1;
	}
	return 0;
}

int
frame_write(int fd, uint16_t type, const ProtobufCMessage *m,
    const void *payload, uint32_t payload_len, int timeout_ms)
{
	return frame_write_s(NULL, fd, type, m, payload, payload_len,
	    timeout_ms);
}

int
frame_write_s(struct seal *s, int fd, uint16_t type,
    const ProtobufCMessage *m, const void *payload, uint32_t payload_len,
    int timeout_ms)
{
	long deadline = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;
	struct iovec iov[2];
	size_t hlen;
	uint8_t *hdr;
	int iovcnt = payload_len ? 2 : 1, ret = -1;

	if ((hdr = frame_encode(type, m, payload_len, &hlen)) == NULL)
		return -1;
	iov[0].iov_base = hdr;
	iov[0].iov_len = hlen;
	iov[1].iov_base = (void *)payload;
	iov[1].iov_len = payload_len;
	if (s != NULL && s->on) {
		ret = frame_write_sealed(s, fd, iov, deadline);
		free(hdr);
		return ret;
	}
	while (iovcnt > 0) {
		ssize_t w = writev(fd, iov + (iov[0].iov_len == 0 ? 1 : 0),
		    iov[0].iov_len == 0 ? 1 : iovcnt);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN || frame_wait(fd, POLLOUT, deadline) < 0)
				goto out;
			continue;
		}
		size_t left = (size_t)w;
		for (int i = 0; i < 2 && left > 0; i++) {
			size_t take = left < iov[i].iov_len ? left : iov[i].iov_len;
			iov[i].iov_base = (char *)iov[i].iov_base + take;
			iov[i].iov_len -= take;
			left -= take;
		}
		if (iov[0].iov_len == 0 && iov[1].iov_len == 0)
			break;
	}
	ret = 0;
out:
	free(hdr);
	return ret;
}

/* Reads exactly n bytes, through s when it is on. EOF is ECONNRESET. */
static int
frame_read_full(struct seal *s, int fd, uint8_t *buf, size_t n,
    long deadline)
{
	while (n > 0) {
		ssize_t r = s != NULL && s->on ? seal_read(s, fd, buf, n) :
		    read(fd, buf, n);
		if (r == 0) {
			errno = ECONNRESET;
			return -1;
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN || frame_wait(fd, POLLIN, deadline) < 0)
				return -1;
			continue;
		}
		buf += r;
		n -= (size_t)r;
	}
	return 0;
}

int
frame_read(int fd, struct frame_hdr *h, ProtobufCMessage **meta,
    uint8_t **payload, int timeout_ms, const char **err)
{
	return frame_read_s(NULL, fd, h, meta, payload, timeout_ms, err);
}

int
frame_read_s(struct seal *s, int fd, struct frame_hdr *h,
    ProtobufCMessage **meta, uint8_t **payload, int timeout_ms,
    const char **err)
{
	long deadline = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;
	uint8_t hdr[FRAME_HDR_LEN];
	uint8_t *mbuf = NULL, *pbuf = NULL;

	*meta = NULL;
	*payload = NULL;
	*err = NULL;
	if (frame_read_full(s, fd, hdr, sizeof(hdr), deadline) < 0)
		goto fail_io;
	if (frame_parse_header(hdr, h, err) < 0) {
		errno = EPROTO;
		return -1;
	}
	if ((mbuf = malloc(h->meta_len ? h->meta_len : 1)) == NULL)
		return -1;
	if (frame_read_full(s, fd, mbuf, h->meta_len, deadline) < 0)
		goto fail_io;
	if ((*meta = frame_unpack_meta(h->type, mbuf, h->meta_len, err)) == NULL) {
		errno = EPROTO;
		goto fail;
	}
	if (h->payload_len > 0) {
		if ((pbuf = malloc(h->payload_len)) == NULL)
			goto fail;
		if (frame_read_full(s, fd, pbuf, h->payload_len, deadline) < 0)
			goto fail_io;
	}
	free(mbuf);
	*payload = pbuf;
	return 0;
fail_io:
	if (errno == EBADMSG)
		*err = "a sealed record failed to open (altered on the way, "
		    "or the peer's keys differ)";
fail:
	free(mbuf);
	free(pbuf);
	frame_free_meta(*meta);
	*meta = NULL;
	return -1;
}
