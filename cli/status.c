/*
 * status.c: `mpiv status --dispatcher HOST:PORT [--json] [JOB]`: asks
 * the dispatcher for its StatusReply and prints the node pool, the
 * services and the jobs with, per rank, its node, incarnation, last
 * durable checkpoint and restarts. Exit 0, 1 when the dispatcher cannot
 * be reached or does not know JOB, 2 on a usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "front.h"
#include "json.h"

static void
status_usage(FILE *f)
{
	fprintf(f,
	    "usage: mpiv status --dispatcher HOST:PORT [--json] [JOB]\n"
	    "  --dispatcher HOST:PORT  the dispatcher (env MPIV_DISPATCHER)\n"
	    "  --json                  one JSON object instead of tables\n"
	    "  --secret-file FILE      the cluster secret (env "
	    "MPIV_SECRET_FILE)\n"
	    "  JOB                     only this job, with all its ranks\n");
}

static void
status_print_text(const Mpiv__StatusReply *r, bool one_job)
{
	printf("dispatcher %s up %.0f s\n", r->dispatcher, r->uptime_s);
	printf("\nNODES (%zu)\n", r->n_nodes);
	if (r->n_nodes > 0)
		printf("  %-24s %-16s %-22s %5s %4s %4s %6s %6s\n", "NODE",
		    "NAME", "FROM", "SLOTS", "USED", "CRIU", "LISTEN", "SEEN");
	for (size_t i = 0; i < r->n_nodes; i++) {
		const Mpiv__NodeInfo *n = r->nodes[i];
		printf("  %-24s %-16s %-22s %5d %4d %4s %6s %5.1fs%s\n",
		    n->node_id, n->name, n->addr, n->slots, n->used, n->criu ?
		    "yes" : "no", n->no_listen ? "no" : "yes", n->last_seen_s,
		    strcmp(n->state, "alive") == 0 ? "" : " (dead)");
	}
	printf("\nSERVICES (%zu)\n", r->n_services);
	for (size_t i = 0; i < r->n_services; i++) {
		const Mpiv__ServiceInfo *s = r->services[i];
		printf("  %-3s %-24s jobs=%d\n", s->role == MPIV__ROLE__ROLE_CM ?
		    "cm" : "cs", s->addr, s->jobs);
	}
	printf("\nJOBS (%zu)\n", r->n_jobs);
	for (size_t i = 0; i < r->n_jobs; i++) {
		const Mpiv__JobInfo *j = r->jobs[i];
		printf("  job %s  %s  %d ranks  %s  %s  age %.0f s  restarts %u"
		    "  checkpoints %u  kills %u\n", j->job_id, j->state,
		    j->nranks, j->n_argv > 0 ? j->argv[0] : "?", j->protocol,
		    j->age_s, j->restarts, j->checkpoints, j->kills);
		if (*j->message != '\0')
			printf("    %s\n", j->message);
		for (size_t k = 0; k < j->n_warnings; k++)
			printf("    warning %s (for %.0f s): %s\n",
			    j->warnings[k]->kind, j->age_s -
			    j->warnings[k]->since_s, j->warnings[k]->text);
		if (j->ckpt_failures > 0)
			printf("    %u failed checkpoint%s\n",
			    j->ckpt_failures, j->ckpt_failures == 1 ? "" :
			    "s");
		if (!one_job && j->n_ranks > 16) {
			printf("    (mpiv status %s lists its %zu ranks)\n",
			    j->job_id, j->n_ranks);
			continue;
		}
		printf("    %5s %-10s %-24s %4s %9s %8s\n", "RANK", "STATE",
		    "NODE", "INC", "LAST_CKPT", "RESTARTS");
		for (size_t k = 0; k < j->n_ranks; k++) {
			const Mpiv__RankInfo *rk = j->ranks[k];
			printf("    %5d %-10s %-24s %4u %9llu %8u\n", rk->rank,
			    rk->state, *rk->node ? rk->node : "-",
			    rk->incarnation, (unsigned long long)rk->last_ckpt,
			    rk->restarts);
			if (*rk->waits != '\0')
				printf("          waits %s (for %.0f s)\n",
				    rk->waits, rk->waited_s);
		}
	}
}

static void
status_kv_str(struct json *j, const char *k, const char *v)
{
	json_key(j, k);
	json_str(j, v);
}

static void
status_kv_int(struct json *j, const char *k, int64_t v)
{
	json_key(j, k);
	json_int(j, v);
}

static void
status_kv_double(struct json *j, const char *k, double v)
{
	json_key(j, k);
	json_double(j, v);
}

static void
status_print_json(const Mpiv__StatusReply *r)
{
	struct json j;

	json_init(&j, stdout);
	json_obj_begin(&j);
	status_kv_str(&j, "dispatcher", r->dispatcher);
	status_kv_double(&j, "uptime_s", r->uptime_s);
	json_key(&j, "nodes");
	json_arr_begin(&j);
	for (size_t i = 0; i < r->n_nodes; i++) {
		const Mpiv__NodeInfo *n = r->nodes[i];
		json_obj_begin(&j);
		status_kv_str(&j, "node_id", n->node_id);
		status_kv_str(&j, "name", n->name);
		status_kv_str(&j, "addr", n->addr);
		status_kv_int(&j, "slots", n->slots);
		status_kv_int(&j, "used", n->used);
		status_kv_int(&j, "criu", n->criu);
		status_kv_int(&j, "listen", !n->no_listen);
		status_kv_double(&j, "last_seen_s", n->last_seen_s);
		status_kv_str(&j, "state", n->state);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_key(&j, "services");
	json_arr_begin(&j);
	for (size_t i = 0; i < r->n_services; i++) {
		json_obj_begin(&j);
		status_kv_str(&j, "role", r->services[i]->role ==
		    MPIV__ROLE__ROLE_CM ? "cm" : "cs");
		status_kv_str(&j, "addr", r->services[i]->addr);
		status_kv_int(&j, "jobs", r->services[i]->jobs);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_key(&j, "jobs");
	json_arr_begin(&j);
	for (size_t i = 0; i < r->n_jobs; i++) {
		const Mpiv__JobInfo *jb = r->jobs[i];
		json_obj_begin(&j);
		status_kv_str(&j, "job", jb->job_id);
		status_kv_str(&j, "state", jb->state);
		status_kv_int(&j, "nranks", jb->nranks);
		status_kv_str(&j, "protocol", jb->protocol);
		status_kv_double(&j, "age_s", jb->age_s);
		status_kv_int(&j, "restarts", jb->restarts);
		status_kv_int(&j, "checkpoints", jb->checkpoints);
		status_kv_int(&j, "kills", jb->kills);
		status_kv_str(&j, "message", jb->message);
		status_kv_int(&j, "ckpt_failures", jb->ckpt_failures);
		json_key(&j, "warnings");
		json_arr_begin(&j);
		for (size_t k = 0; k < jb->n_warnings; k++) {
			const Mpiv__JobWarning *w = jb->warnings[k];
			json_obj_begin(&j);
			status_kv_str(&j, "kind", w->kind);
			status_kv_double(&j, "since_s", w->since_s);
			status_kv_str(&j, "text", w->text);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_key(&j, "ranks");
		json_arr_begin(&j);
		for (size_t k = 0; k < jb->n_ranks; k++) {
			const Mpiv__RankInfo *rk = jb->ranks[k];
			json_obj_begin(&j);
			status_kv_int(&j, "rank", rk->rank);
			status_kv_str(&j, "state", rk->state);
			status_kv_str(&j, "node", rk->node);
			status_kv_int(&j, "incarnation", rk->incarnation);
			status_kv_int(&j, "last_ckpt", (int64_t)rk->last_ckpt);
			status_kv_int(&j, "restarts", rk->restarts);
			if (*rk->waits != '\0') {
				status_kv_str(&j, "waits", rk->waits);
				json_key(&j, "waited_s");
				json_double(&j, rk->waited_s);
			}
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	putchar('\n');
}

int
status_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dispatcher", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "secret-file", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	Mpiv__StatusRequest sr = MPIV__STATUS_REQUEST__INIT;
	Mpiv__StatusReply *rep;
	ProtobufCMessage *m;
	const char *disp = getenv("MPIV_DISPATCHER");
	bool json = false;
	int ch, fd, rc = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+d:hjk:", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			disp = optarg;
			break;
		case 'h':
			status_usage(stdout);
			return 0;
		case 'j':
			json = true;
			break;
		case 'k':
			kill_secret_file(optarg);
			break;
		default:
			status_usage(stderr);
			return 2;
		}
	}
	if (disp == NULL || *disp == '\0' || argc - optind > 1) {
		fprintf(stderr, "mpiv status: %s\n", disp == NULL ||
		    *disp == '\0' ? "missing --dispatcher HOST:PORT" :
		    "want at most one JOB");
		status_usage(stderr);
		return 2;
	}
	sr.job_id = argc - optind == 1 ? argv[optind] : (char *)"";
	if ((fd = kill_connect("status", disp)) < 0)
		return 1;
	m = kill_request("status", fd, MPIV__MSG_TYPE__MSG_STATUS_REQUEST,
	    &sr.base, MPIV__MSG_TYPE__MSG_STATUS_REPLY);
	close(fd);
	if (m == NULL)
		return 1;
	rep = (Mpiv__StatusReply *)m;
	if (*rep->error != '\0') {
		fprintf(stderr, "mpiv status: %s\n", rep->error);
		rc = 1;
	} else if (json) {
		status_print_json(rep);
	} else {
		status_print_text(rep, *sr.job_id != '\0');
	}
	frame_free_meta(m);
	return rc;
}
