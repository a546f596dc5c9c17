/* dt_pack: Pack / Unpack / Pack_size with basic and derived types, send
 * as MPI_PACKED, receive unpacked (and the reverse). */
#include "mpitest.h"

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "dt_pack");
	int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
	int iv[6], pos = 0, psize, sz;
	double dv[3];
	char cv[5] = "abcd";
	for (int i = 0; i < 6; i++)
		iv[i] = t_rank * 10 + i;
	for (int i = 0; i < 3; i++)
		dv[i] = t_rank + i * 0.125;
	MPI_Datatype vec;	/* ints 0, 2, 4 */
	MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
	MPI_OK(MPI_Type_commit(&vec));

	int total = 0;
	MPI_OK(MPI_Pack_size(1, vec, MPI_COMM_WORLD, &psize));
	CHECK(psize >= 12, "Pack_size(vector of 3 ints) = %d", psize);
	total += psize;
	MPI_OK(MPI_Pack_size(3, MPI_DOUBLE, MPI_COMM_WORLD, &psize));
	CHECK(psize >= 24, "Pack_size(3 doubles) = %d", psize);
	total += psize;
	MPI_OK(MPI_Pack_size(5, MPI_CHAR, MPI_COMM_WORLD, &psize));
	total += psize;
	char *pbuf = malloc(total), *rbuf = malloc(total);
	MPI_OK(MPI_Pack(iv, 1, vec, pbuf, total, &pos, MPI_COMM_WORLD));
	CHECK_INT(pos, 12, "position after packing the vector");
	MPI_OK(MPI_Pack(dv, 3, MPI_DOUBLE, pbuf, total, &pos, MPI_COMM_WORLD));
	MPI_OK(MPI_Pack(cv, 5, MPI_CHAR, pbuf, total, &pos, MPI_COMM_WORLD));
	CHECK(pos <= total, "packed %d > Pack_size total %d", pos, total);
	int packed = pos;

	/* send packed, receive packed, unpack */
	MPI_Status st;
	MPI_OK(MPI_Sendrecv(pbuf, packed, MPI_PACKED, right, 1, rbuf, total, MPI_PACKED, left, 1,
	    MPI_COMM_WORLD, &st));
	int cnt;
	MPI_OK(MPI_Get_count(&st, MPI_PACKED, &cnt));
	CHECK_INT(cnt, packed, "Get_count MPI_PACKED");
	int ri[6] = { -1, -1, -1, -1, -1, -1 };
	double rd[3];
	char rc[5];
	pos = 0;
	MPI_OK(MPI_Unpack(rbuf, cnt, &pos, ri, 1, vec, MPI_COMM_WORLD));
	MPI_OK(MPI_Unpack(rbuf, cnt, &pos, rd, 3, MPI_DOUBLE, MPI_COMM_WORLD));
	MPI_OK(MPI_Unpack(rbuf, cnt, &pos, rc, 5, MPI_CHAR, MPI_COMM_WORLD));
	CHECK_INT(pos, packed, "position after unpacking everything");
	CHECK(ri[0] == left * 10 && ri[1] == -1 && ri[2] == left * 10 + 2 && ri[4] == left * 10 + 4 && ri[5] == -1,
	    "unpacked vector");
	for (int i = 0; i < 3; i++)
		CHECK(rd[i] == left + i * 0.125, "unpacked double %d", i);
	CHECK(!strcmp(rc, "abcd"), "unpacked chars");
	t_mix(ri, sizeof ri);
	t_mix(rd, sizeof rd);

	/* pack 3 ints, send as PACKED, receive as 3 MPI_INT (same
	 * representation on a homogeneous system) */
	int three[3] = { t_rank, t_rank * 2, t_rank * 3 }, got[3];
	pos = 0;
	MPI_OK(MPI_Pack(three, 3, MPI_INT, pbuf, total, &pos, MPI_COMM_WORLD));
	MPI_OK(MPI_Sendrecv(pbuf, pos, MPI_PACKED, right, 2, got, 3, MPI_INT, left, 2, MPI_COMM_WORLD, &st));
	CHECK(got[0] == left && got[1] == 2 * left && got[2] == 3 * left, "PACKED -> INT");
	/* and receive ints as PACKED, then unpack */
	MPI_OK(MPI_Sendrecv(three, 3, MPI_INT, right, 3, rbuf, total, MPI_PACKED, left, 3, MPI_COMM_WORLD, &st));
	pos = 0;
	MPI_OK(MPI_Unpack(rbuf, 12, &pos, got, 3, MPI_INT, MPI_COMM_WORLD));
	CHECK(got[0] == left && got[2] == 3 * left, "INT -> PACKED -> unpack");

	/* Pack of count 0 leaves position */
	pos = 5;
	MPI_OK(MPI_Pack(three, 0, MPI_INT, pbuf, total, &pos, MPI_COMM_WORLD));
	CHECK_INT(pos, 5, "Pack count 0 position");
	MPI_OK(MPI_Type_size(MPI_PACKED, &sz));
	CHECK_INT(sz, 1, "size of MPI_PACKED");
	/* Pack into too small a buffer fails under ERRORS_RETURN */
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	pos = 0;
	int e = MPI_Pack(three, 3, MPI_INT, pbuf, 8, &pos, MPI_COMM_WORLD);
	CHECK(e != MPI_SUCCESS, "Pack of 12 bytes into 8 succeeded");
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	free(pbuf);
	free(rbuf);
	MPI_OK(MPI_Type_free(&vec));
	t_mix(got, sizeof got);
	return t_finish();
}
