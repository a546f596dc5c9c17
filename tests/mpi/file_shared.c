/* file_shared: the shared file pointer. write_ordered (rank r writes
 * r + 1 records, in rank order) then read_ordered back; get_position
 * _shared; seek_shared; write_shared from every rank (distinct records,
 * any order) and rank 0 checks each appears exactly once; the split
 * collective write_ordered_begin/end; a file of its own per rank on
 * MPI_COMM_SELF. */
#include <unistd.h>
#include "mpitest.h"

#define RL 16		/* bytes per record */

/* Record n of rank r. */
static void
rec(char *out, int r, int n)
{
	char tmp[RL + 1];

	snprintf(tmp, sizeof(tmp), "r%03d n%03d ......", r, n);
	memcpy(out, tmp, RL - 1);
	out[RL - 1] = '\n';
}

int main(int argc, char **argv)
{
	t_init(&argc, &argv, "file_shared");
	const char *dir = getenv("TMPDIR");
	char name[512], *buf, *in;
	long long uniq[2] = { 0, 0 };
	int mine = t_rank + 1, before = t_rank * (t_rank + 1) / 2, cnt;
	int total = t_size * (t_size + 1) / 2;
	MPI_File fh;
	MPI_Status st;
	MPI_Offset pos;

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	if (t_rank == 0) {
		uniq[0] = (long long)getpid();
		uniq[1] = (long long)(MPI_Wtime() * 1e6);
	}
	MPI_OK(MPI_Bcast(uniq, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
	snprintf(name, sizeof(name), "%s/mpiv_file_shared_%lld_%lld", dir,
	    uniq[0], uniq[1]);
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, name,
	    MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
	    MPI_INFO_NULL, &fh));
	buf = malloc((size_t)(total + t_size) * RL);
	in = malloc((size_t)(total + t_size) * RL);

	/* 1. ordered: rank order, whatever the timing */
	for (int n = 0; n < mine; n++)
		rec(buf + n * RL, t_rank, n);
	MPI_OK(MPI_File_write_ordered(fh, buf, mine * RL, MPI_CHAR, &st));
	MPI_OK(MPI_Get_count(&st, MPI_CHAR, &cnt));
	CHECK_INT(cnt, mine * RL, "write_ordered count");
	MPI_OK(MPI_File_get_position_shared(fh, &pos));
	CHECK_INT(pos, (long long)total * RL, "shared position after write_ordered");
	MPI_OK(MPI_File_sync(fh));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_File_sync(fh));
	if (t_rank == 0) {
		MPI_OK(MPI_File_read_at(fh, 0, in, total * RL, MPI_CHAR, &st));
		MPI_OK(MPI_Get_count(&st, MPI_CHAR, &cnt));
		CHECK_INT(cnt, total * RL, "ordered region size");
		for (int r = 0, k = 0; r < t_size; r++)
			for (int n = 0; n <= r; n++, k++) {
				char want[RL];
				rec(want, r, n);
				CHECK(memcmp(in + k * RL, want, RL) == 0,
				    "ordered record %d is not rank %d's #%d", k, r, n);
			}
		t_mix(in, (size_t)total * RL);
	}
	/* read it back in order through the shared pointer */
	MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
	MPI_OK(MPI_File_get_position_shared(fh, &pos));
	CHECK_INT(pos, 0, "shared position after seek_shared(0)");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	memset(in, 0, (size_t)mine * RL);
	MPI_OK(MPI_File_read_ordered(fh, in, mine * RL, MPI_CHAR, &st));
	MPI_OK(MPI_Get_count(&st, MPI_CHAR, &cnt));
	CHECK_INT(cnt, mine * RL, "read_ordered count");
	CHECK(memcmp(in, buf, (size_t)mine * RL) == 0,
	    "read_ordered did not give my records back (I am after %d)", before);

	/* 2. seek_shared to the end, then write_shared: any order */
	MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
	MPI_OK(MPI_File_get_position_shared(fh, &pos));
	CHECK_INT(pos, (long long)total * RL, "seek_shared(0, END)");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	rec(buf, t_rank, 900);
	MPI_OK(MPI_File_write_shared(fh, buf, RL, MPI_CHAR, &st));
	MPI_OK(MPI_Get_count(&st, MPI_CHAR, &cnt));
	CHECK_INT(cnt, RL, "write_shared count");
	MPI_OK(MPI_File_sync(fh));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_File_sync(fh));
	MPI_OK(MPI_File_get_position_shared(fh, &pos));
	CHECK_INT(pos, (long long)(total + t_size) * RL, "shared position after write_shared");
	if (t_rank == 0) {
		int *seen = calloc((size_t)t_size, sizeof(int));

		MPI_OK(MPI_File_read_at(fh, (MPI_Offset)total * RL, in, t_size * RL,
		    MPI_CHAR, &st));
		MPI_OK(MPI_Get_count(&st, MPI_CHAR, &cnt));
		CHECK_INT(cnt, t_size * RL, "write_shared region size");
		for (int k = 0; k < t_size; k++) {
			int r = -1, n = -1;
			char want[RL];

			CHECK(sscanf(in + k * RL, "r%d n%d", &r, &n) == 2 &&
			    r >= 0 && r < t_size && n == 900,
			    "write_shared record %d is garbage", k);
			rec(want, r, 900);
			CHECK(memcmp(in + k * RL, want, RL) == 0, "record %d torn", k);
			seen[r]++;
		}
		for (int r = 0; r < t_size; r++)
			CHECK_INT(seen[r], 1, "rank's write_shared records");
		free(seen);
	}

	/* 3. the split collective, then a relative seek_shared */
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	rec(buf, t_rank, 950);
	MPI_OK(MPI_File_write_ordered_begin(fh, buf, RL, MPI_CHAR));
	MPI_OK(MPI_File_write_ordered_end(fh, buf, &st));
	MPI_OK(MPI_Get_count(&st, MPI_CHAR, &cnt));
	CHECK_INT(cnt, RL, "write_ordered_end count");
	MPI_OK(MPI_File_seek_shared(fh, -(MPI_Offset)t_size * RL, MPI_SEEK_CUR));
	MPI_OK(MPI_File_read_ordered(fh, in, RL, MPI_CHAR, &st));
	CHECK(memcmp(in, buf, RL) == 0, "split ordered record");
	t_mix(in, RL);

	MPI_OK(MPI_File_close(&fh));

	/* 5. every rank opens a file of its own on MPI_COMM_SELF (the same
	   context id on every rank): each is created, has its own shared
	   file pointer, and holds only its rank's records */
	{
		char self[600];
		MPI_File sf;
		MPI_Offset sz;

		snprintf(self, sizeof(self), "%s.self%d", name, t_rank);
		MPI_OK(MPI_File_open(MPI_COMM_SELF, self, MPI_MODE_CREATE |
		    MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
		    &sf));
		for (int n = 0; n < 2; n++) {
			rec(buf, t_rank, n);
			MPI_OK(MPI_File_write_shared(sf, buf, RL, MPI_CHAR,
			    &st));
		}
		MPI_OK(MPI_File_get_position_shared(sf, &pos));
		CHECK_INT(pos, 2 * RL, "own file: shared position");
		MPI_OK(MPI_File_get_size(sf, &sz));
		CHECK_INT(sz, 2 * RL, "own file: size");
		MPI_OK(MPI_File_read_at(sf, RL, in, RL, MPI_CHAR, &st));
		rec(buf, t_rank, 1);
		CHECK(memcmp(in, buf, RL) == 0, "own file: second record");
		MPI_OK(MPI_File_close(&sf));
	}
	free(buf);
	free(in);
	return t_finish();
}
