/*
 * fuzz_priv.c: libFuzzer target for the decoder of the packets between
 * the node agent and its privileged helper (helper_decode in
 * node-agent/helper.c): any bytes, as one packet, must decode into one of
 * the Priv* messages or fail with a reason; what decodes re-encodes into
 * a packet that decodes again to the same type (when protobuf-c kept no
 * unknown fields).
 * MPIV_FUZZ_WRITE_SEEDS=DIR writes one valid packet of each type into DIR
 * (the seeds in tests/fuzz/seeds/fuzz_priv) and exits.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../node-agent/helper.h"

static void
fuzz_seed(const char *dir, const char *name, uint16_t type,
    const ProtobufCMessage *m)
{
	char path[512];
	uint8_t *enc;
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((enc = frame_encode(type, m, 0, &len)) == NULL ||
	    (f = fopen(path, "w")) == NULL)
		exit(1);
	fwrite(enc, 1, len, f);
	fclose(f);
	free(enc);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("MPIV_FUZZ_WRITE_SEEDS");
	char *av[] = { "/bin/echo", "hi" }, *ev[] = { "A=1" };
	Mpiv__PrivSpawn sp = MPIV__PRIV_SPAWN__INIT;
	Mpiv__PrivSpawned sd = MPIV__PRIV_SPAWNED__INIT;
	Mpiv__PrivSignal sg = MPIV__PRIV_SIGNAL__INIT;
	Mpiv__PrivDump du = MPIV__PRIV_DUMP__INIT;
	Mpiv__PrivDumped dd = MPIV__PRIV_DUMPED__INIT;
	Mpiv__PrivRestore rs = MPIV__PRIV_RESTORE__INIT;
	Mpiv__PrivRestored rd = MPIV__PRIV_RESTORED__INIT;
	Mpiv__PrivExit ex = MPIV__PRIV_EXIT__INIT;
	Mpiv__PrivKeys pk = MPIV__PRIV_KEYS__INIT;
	Mpiv__PipeInode pi = MPIV__PIPE_INODE__INIT, *pp[1] = { &pi };

	if (dir == NULL)
		return 0;
	sp.id = 1; sp.job_id = "7"; sp.rank = 2; sp.incarnation = 3;
	sp.argv = av; sp.n_argv = 2; sp.env = ev; sp.n_env = 1;
	sp.cwd = "/tmp"; sp.ns_pid = 1234;
	fuzz_seed(dir, "spawn", MPIV__MSG_TYPE__MSG_PRIV_SPAWN, &sp.base);
	sd.id = 1; sd.pid = 100; sd.task_pid = 101; sd.exec_errno = 2;
	sd.exec_step = "execute";
	fuzz_seed(dir, "spawned", MPIV__MSG_TYPE__MSG_PRIV_SPAWNED, &sd.base);
	sg.pid = 100; sg.signal = 9; sg.how = MPIV__PRIV_HOW__PRIV_ALL;
	fuzz_seed(dir, "signal", MPIV__MSG_TYPE__MSG_PRIV_SIGNAL, &sg.base);
	du.id = 2; du.pid = 100; du.clone_ns = 5;
	fuzz_seed(dir, "dump", MPIV__MSG_TYPE__MSG_PRIV_DUMP, &du.base);
	pi.fd = 3; pi.inode = 4242;
	dd.id = 2; dd.ok = 1; dd.clone = 300; dd.dump_s = 0.1; dd.pipes = pp;
	dd.n_pipes = 1; dd.dir = "/dev/shm/mpiv-ckpt-1-abcdef";
	fuzz_seed(dir, "dumped", MPIV__MSG_TYPE__MSG_PRIV_DUMPED, &dd.base);
	pi.fd = 0;
	rs.id = 3; rs.dir = "/dev/shm/mpiv-rst-1-abcdef"; rs.as_pid = 1234;
	rs.map = pp; rs.n_map = 1;
	fuzz_seed(dir, "restore", MPIV__MSG_TYPE__MSG_PRIV_RESTORE, &rs.base);
	rd.id = 3; rd.pid = 400; rd.task_pid = 401;
	fuzz_seed(dir, "restored", MPIV__MSG_TYPE__MSG_PRIV_RESTORED, &rd.base);
	ex.pid = 100; ex.status = 9;
	fuzz_seed(dir, "exit", MPIV__MSG_TYPE__MSG_PRIV_EXIT, &ex.base);
	pk.path = "/etc/mpiv/node.key";
	fuzz_seed(dir, "keys", MPIV__MSG_TYPE__MSG_PRIV_KEYS, &pk.base);
	exit(0);
}

/* Unknown fields anywhere in m, nested messages included. */
static bool
fuzz_has_unknown(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;

	if (m->n_unknown_fields > 0)
		return true;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *base = (const char *)m + f->offset;

		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)((const char *)m +
			    f->quantifier_offset);
			ProtobufCMessage *const *v =
			    *(ProtobufCMessage *const *const *)base;

			for (size_t k = 0; k < n; k++)
				if (v[k] != NULL && fuzz_has_unknown(v[k]))
					return true;
		} else {
			const ProtobufCMessage *sub =
			    *(const ProtobufCMessage *const *)base;

			if (sub != NULL && fuzz_has_unknown(sub))
				return true;
		}
	}
	return false;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ProtobufCMessage *m, *m2;
	struct frame_hdr h, h2;
	const char *err = NULL;
	uint8_t *enc;
	size_t len;

	if (helper_decode(data, size, &h, &m, &err) < 0) {
		if (err == NULL || m != NULL)
			abort();	/* every failure says why, leaks nothing */
		return 0;
	}
	if (h.type < MPIV__MSG_TYPE__MSG_PRIV_SPAWN ||
	    h.type > MPIV__MSG_TYPE__MSG_PRIV_KEYS)
		abort();
	/* Unknown fields are kept and written back as they came, also ones
	   protobuf-c reads but refuses to read twice (field number 0), in
	   nested messages too: only messages without any round-trip. */
	if (!fuzz_has_unknown(m) &&
	    (enc = frame_encode(h.type, m, 0, &len)) != NULL) {
		if (helper_decode(enc, len, &h2, &m2, &err) < 0 ||
		    h2.type != h.type)
			abort();
		frame_free_meta(m2);
		free(enc);
	}
	frame_free_meta(m);
	return 0;
}
