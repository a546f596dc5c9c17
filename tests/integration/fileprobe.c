/*
 * fileprobe.c PATH [TEXT]: every rank opens PATH (created, write-only)
 * with MPI-IO, rank 0 writes TEXT (default "hello\n") at offset 0, all
 * close it. A failure prints "fileprobe: CALL: ERROR STRING (class N)"
 * and exits 3 (files return errors by default: MPI_ERRORS_RETURN). With
 * FILEPROBE_FATAL set, errors of opens are fatal instead (mpiv says why
 * in one line and ends the job).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
check(int rc, const char *call)
{
	char s[MPI_MAX_ERROR_STRING];
	int len = 0, cls = 0;

	if (rc == MPI_SUCCESS)
		return 0;
	MPI_Error_string(rc, s, &len);
	MPI_Error_class(rc, &cls);
	printf("fileprobe: %s: %s (class %d)\n", call, s, cls);
	fflush(stdout);
	return 1;
}

int
main(int argc, char **argv)
{
	const char *text = argc > 2 ? argv[2] : "hello\n";
	MPI_File fh;
	MPI_Status st;
	int rank, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (getenv("FILEPROBE_FATAL") != NULL)
		MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
	if (argc < 2) {
		fprintf(stderr, "usage: fileprobe PATH [TEXT]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (check(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE |
	    MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), "MPI_File_open")) {
		MPI_Finalize();
		return 3;
	}
	if (rank == 0)
		bad |= check(MPI_File_write_at(fh, 0, text, (int)strlen(text),
		    MPI_CHAR, &st), "MPI_File_write_at");
	bad |= check(MPI_File_close(&fh), "MPI_File_close");
	if (rank == 0 && !bad)
		printf("fileprobe: wrote %s\n", argv[1]);
	MPI_Finalize();
	return bad ? 3 : 0;
}
