/*
 * test_request.c: the wire ids of libmpi-lite's requests (request.c,
 * included directly): an answer from the CM finds the request it names
 * by id, and nothing else. A request not started (id 0) is not found by
 * id 0, which is what a Deliver, ProbeReply or CancelReply whose req_id
 * was left out reads as; the start serial never makes an id whose upper
 * half is 0, also when its low 32 bits wrap. What request.c calls in the
 * rest of the library is stubbed below.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "../../libmpi-lite/request.c"

/* ---- stubs for what request.c calls in the rest of the library ---- */

struct mpiv_state mpiv_state = { .initialized = true, .world_rank = 0,
	.world_size = 2 };
struct mpiv_comm mpiv_comm_world;
bool mpiv_ckpt_armed;

void mpiv_ckpt_check(void) { }
int mpiv_ckpt_due_ms(void) { return -1; }
int mpiv_dt_check(MPI_Datatype dt) { (void)dt; return MPI_SUCCESS; }
void mpiv_dt_release(MPI_Datatype dt) { (void)dt; }
MPI_Count mpiv_dt_elements(MPI_Datatype dt, size_t bytes) { (void)dt; return (MPI_Count)bytes; }
int mpiv_err(MPI_Comm comm, int code, const char *fn)
{
	(void)comm;
	(void)fn;
	return code;
}
void mpiv_fault_point(const char *name) { (void)name; }
int mpiv_nbc_active;
struct mpiv_request *mpiv_nbc_waited;
void mpiv_err_detail(const char *fmt, ...) { (void)fmt; }
int mpiv_nbc_progress(void) { return MPI_SUCCESS; }
int mpiv_nbc_call(void) { return MPI_SUCCESS; }
void mpiv_waitrep_begin(const char *c, struct mpiv_request *const *r, int n) { (void)c; (void)r; (void)n; }
void mpiv_waitrep_end(void) {}
void mpiv_waitrep_polling(const char *c, struct mpiv_request *const *r, int n) { (void)c; (void)r; (void)n; }
void mpiv_waitrep_polled(void) {}
void mpiv_nbc_drop(struct mpiv_request *r) { (void)r; }
bool mpiv_nbc_is_collective(const struct mpiv_request *r) { return r->kind == MPIV_REQ_COLL; }
const Mpiv__NdOutcome *mpiv_ndlog_peek(void) { return NULL; }
uint64_t mpiv_ndlog_current(void) { return 0; }
const char *mpiv_ndlog_kind_name(uint32_t kind) { (void)kind; return "?"; }
int mpiv_ndlog_next(uint32_t kind, const Mpiv__NdOutcome **out)
{
	(void)kind;
	(void)out;
	return 0;
}
int mpiv_ndlog_record(uint32_t kind, bool flag, int n, const int *idx)
{
	(void)kind;
	(void)flag;
	(void)n;
	(void)idx;
	return MPI_SUCCESS;
}
int mpiv_tp_progress(int timeout_ms) { (void)timeout_ms; return MPI_SUCCESS; }
void mpiv_tp_poll_done(long entry, bool found) { (void)entry; (void)found; }
void mpiv_tp_set_error(const char *fmt, ...) { (void)fmt; }
int mpiv_greq_report(struct mpiv_request *r, MPI_Status *st)
{
	(void)r;
	(void)st;
	return MPI_SUCCESS;
}
int mpiv_greq_free(struct mpiv_request *r) { (void)r; return MPI_SUCCESS; }
int mpiv_greq_query(struct mpiv_request *r) { (void)r; return MPI_SUCCESS; }

/* ---- tests ---- */

/* A started request is found by its id, a stale id of its slot is not. */
static void
test_lookup_started(void **state)
{
	struct mpiv_request *r = mpiv_req_alloc(MPIV_REQ_RECV);
	uint64_t old, id;

	(void)state;
	assert_non_null(r);
	old = mpiv_req_new_id(r);
	id = mpiv_req_new_id(r);
	assert_ptr_equal(mpiv_req_lookup(id), r);
	assert_null(mpiv_req_lookup(old));
	assert_null(mpiv_req_lookup(id + 1));	/* another slot */
	mpiv_req_release(r);
	assert_null(mpiv_req_lookup(id));
}

/* A request not started yet (a persistent one before MPI_Start) has id
   0: an answer with req_id 0 must not reach it, whatever its slot. */
static void
test_lookup_not_started(void **state)
{
	struct mpiv_request *r[3];

	(void)state;
	for (int i = 0; i < 3; i++) {
		r[i] = mpiv_req_alloc(MPIV_REQ_RECV);
		assert_non_null(r[i]);
		assert_int_equal(r[i]->id, 0);
	}
	for (int i = 0; i < 3; i++)
		assert_null(mpiv_req_lookup((uint64_t)r[i]->slot));
	assert_null(mpiv_req_lookup(0));
	for (int i = 3; i-- > 0;)
		mpiv_req_release(r[i]);
}

/* The serial's low 32 bits wrap past 0 without making an id of upper
   half 0, which lookup refuses. */
static void
test_serial_wraps_past_zero(void **state)
{
	struct mpiv_request *r = mpiv_req_alloc(MPIV_REQ_SEND);
	uint64_t id;

	(void)state;
	assert_non_null(r);
	req_serial = 0xfffffffeull;
	id = mpiv_req_new_id(r);
	assert_int_equal(id >> 32, 0xffffffffull);
	assert_ptr_equal(mpiv_req_lookup(id), r);
	id = mpiv_req_new_id(r);
	assert_int_equal(id >> 32, 1);
	assert_int_equal((uint32_t)id, r->slot);
	assert_ptr_equal(mpiv_req_lookup(id), r);
	mpiv_req_release(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_started),
		cmocka_unit_test(test_lookup_not_started),
		cmocka_unit_test(test_serial_wraps_past_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
