/* topo: Dims_create (fixed and free dims), Cart_create (periodic and not,
 * with excess ranks getting COMM_NULL), Cart_coords/rank/shift/get/sub,
 * Cartdim_get, Topo_test; a halo exchange along the shifts. */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "topo");
	int dims[3], st;

	/* Dims_create */
	int d2[2] = { 0, 0 };
	MPI_OK(MPI_Dims_create(12, 2, d2));
	CHECK(d2[0] == 4 && d2[1] == 3, "Dims_create(12,2) = %dx%d", d2[0], d2[1]);
	int d3[3] = { 0, 3, 0 };
	MPI_OK(MPI_Dims_create(24, 3, d3));
	CHECK(d3[0] == 4 && d3[1] == 3 && d3[2] == 2, "Dims_create(24,{0,3,0}) = %dx%dx%d", d3[0], d3[1], d3[2]);
	int d1[3] = { 0, 0, 0 };
	MPI_OK(MPI_Dims_create(7, 3, d1));
	CHECK(d1[0] == 7 && d1[1] == 1 && d1[2] == 1, "Dims_create(7,3)");
	int d4[2] = { 0, 0 };
	MPI_OK(MPI_Dims_create(16, 2, d4));
	CHECK(d4[0] == 4 && d4[1] == 4, "Dims_create(16,2)");

	MPI_OK(MPI_Topo_test(MPI_COMM_WORLD, &st));
	CHECK_INT(st, MPI_UNDEFINED, "Topo_test(world)");

	/* 2-D grid from all ranks, periodic in dim 0 only */
	dims[0] = dims[1] = 0;
	MPI_OK(MPI_Dims_create(t_size, 2, dims));
	CHECK_INT(dims[0] * dims[1], t_size, "Dims_create product");
	CHECK(dims[0] >= dims[1], "Dims_create non-increasing");
	int periods[2] = { 1, 0 };
	MPI_Comm cart;
	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
	MPI_OK(MPI_Topo_test(cart, &st));
	CHECK_INT(st, MPI_CART, "Topo_test(cart)");
	int nd;
	MPI_OK(MPI_Cartdim_get(cart, &nd));
	CHECK_INT(nd, 2, "Cartdim_get");
	int r, co[2], gd[2], gp[2], gc[2];
	MPI_OK(MPI_Comm_rank(cart, &r));
	CHECK_INT(r, t_rank, "cart rank without reorder");
	MPI_OK(MPI_Cart_coords(cart, r, 2, co));
	CHECK(co[0] == r / dims[1] && co[1] == r % dims[1], "Cart_coords row-major");
	MPI_OK(MPI_Cart_get(cart, 2, gd, gp, gc));
	CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0 && gc[0] == co[0] && gc[1] == co[1], "Cart_get");
	int back;
	MPI_OK(MPI_Cart_rank(cart, co, &back));
	CHECK_INT(back, r, "Cart_rank(Cart_coords)");
	/* periodic wrap in Cart_rank */
	int wrap[2] = { co[0] + dims[0], co[1] };
	MPI_OK(MPI_Cart_rank(cart, wrap, &back));
	CHECK_INT(back, r, "Cart_rank with wrapped periodic coordinate");

	int src, dst;
	MPI_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
	CHECK_INT(src, ((co[0] - 1 + dims[0]) % dims[0]) * dims[1] + co[1], "shift dim0 source");
	CHECK_INT(dst, ((co[0] + 1) % dims[0]) * dims[1] + co[1], "shift dim0 dest");
	int v = r * 10, got = -1;
	MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, dst, 0, &got, 1, MPI_INT, src, 0, cart, MPI_STATUS_IGNORE));
	CHECK_INT(got, src * 10, "halo exchange along dim 0");
	t_mix_int(got);
	MPI_OK(MPI_Cart_shift(cart, 1, 1, &src, &dst));
	CHECK_INT(src, co[1] == 0 ? MPI_PROC_NULL : r - 1, "shift dim1 source (non-periodic)");
	CHECK_INT(dst, co[1] == dims[1] - 1 ? MPI_PROC_NULL : r + 1, "shift dim1 dest (non-periodic)");
	got = -1;
	MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, dst, 1, &got, 1, MPI_INT, src, 1, cart, MPI_STATUS_IGNORE));
	CHECK_INT(got, src == MPI_PROC_NULL ? -1 : src * 10, "halo exchange along dim 1");
	MPI_OK(MPI_Cart_shift(cart, 1, -2, &src, &dst));
	CHECK_INT(dst, co[1] - 2 >= 0 ? r - 2 : MPI_PROC_NULL, "shift by -2 dest");

	/* Cart_sub: keep dim 1 -> rows */
	int remain[2] = { 0, 1 };
	MPI_Comm row;
	MPI_OK(MPI_Cart_sub(cart, remain, &row));
	int rs, rr;
	MPI_OK(MPI_Comm_size(row, &rs));
	MPI_OK(MPI_Comm_rank(row, &rr));
	CHECK(rs == dims[1] && rr == co[1], "Cart_sub row size %d rank %d", rs, rr);
	MPI_OK(MPI_Cartdim_get(row, &nd));
	CHECK_INT(nd, 1, "Cartdim of sub");
	int sum = 0;
	MPI_OK(MPI_Allreduce(&t_rank, &sum, 1, MPI_INT, MPI_SUM, row));
	CHECK_INT(sum, co[0] * dims[1] * dims[1] + dims[1] * (dims[1] - 1) / 2, "Allreduce along a row");
	t_mix_int(sum);
	MPI_OK(MPI_Comm_free(&row));
	MPI_OK(MPI_Comm_free(&cart));

	/* a 1-D ring with fewer nodes than ranks: excess get COMM_NULL */
	int k = t_size > 1 ? t_size - 1 : 1, per = 1;
	MPI_Comm ring;
	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &k, &per, 0, &ring));
	if (t_rank >= k) {
		CHECK(ring == MPI_COMM_NULL, "excess rank got a cart comm");
	} else {
		MPI_OK(MPI_Cart_shift(ring, 0, 1, &src, &dst));
		MPI_OK(MPI_Comm_rank(ring, &r));
		CHECK(src == (r - 1 + k) % k && dst == (r + 1) % k, "1-D ring shift");
		MPI_OK(MPI_Comm_free(&ring));
	}
	/* 3-D, sub keeping dims 0 and 2 */
	int d[3] = { 0, 0, 0 }, p3[3] = { 0, 1, 0 };
	MPI_OK(MPI_Dims_create(t_size, 3, d));
	MPI_Comm c3, s3;
	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 3, d, p3, 0, &c3));
	int keep[3] = { 1, 0, 1 }, c3c[3];
	MPI_OK(MPI_Cart_sub(c3, keep, &s3));
	MPI_OK(MPI_Comm_size(s3, &rs));
	CHECK_INT(rs, d[0] * d[2], "3-D sub size");
	MPI_OK(MPI_Comm_rank(c3, &r));
	MPI_OK(MPI_Cart_coords(c3, r, 3, c3c));
	MPI_OK(MPI_Comm_rank(s3, &rr));
	CHECK_INT(rr, c3c[0] * d[2] + c3c[2], "3-D sub rank");
	MPI_OK(MPI_Comm_free(&s3));
	MPI_OK(MPI_Comm_free(&c3));
	return t_finish();
}
