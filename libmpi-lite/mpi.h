/*
 * mpi.h: the MPI subset of libmpi-lite (mpiv). Handles are pointers to
 * opaque library objects, as in Open MPI, so predefined handles are link
 * time constants. Anything not declared here is not supported by mpiv and
 * fails to compile or link rather than misbehave.
 */
#ifndef MPIV_MPI_H
#define MPIV_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION	3
#define MPI_SUBVERSION	1
#define MPIV_MPI_LITE	1

typedef struct mpiv_comm *MPI_Comm;
typedef struct mpiv_group *MPI_Group;
typedef struct mpiv_datatype *MPI_Datatype;
typedef struct mpiv_op *MPI_Op;
typedef struct mpiv_request *MPI_Request;
typedef struct mpiv_errhandler *MPI_Errhandler;
typedef struct mpiv_info *MPI_Info;
typedef struct mpiv_win *MPI_Win;
typedef struct mpiv_message *MPI_Message;
typedef struct mpiv_file *MPI_File;

typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

typedef struct MPI_Status {
	int MPI_SOURCE;
	int MPI_TAG;
	int MPI_ERROR;
	int mpiv_cancelled;
	size_t mpiv_count;	/* bytes received */
} MPI_Status;

/* ---- predefined objects (defined in the library) ---- */
extern struct mpiv_comm mpiv_comm_world, mpiv_comm_self, mpiv_comm_null;
extern struct mpiv_group mpiv_group_empty, mpiv_group_null;
extern struct mpiv_errhandler mpiv_errors_are_fatal, mpiv_errors_return,
    mpiv_errhandler_null;
extern struct mpiv_info mpiv_info_null, mpiv_info_env;
extern struct mpiv_request mpiv_request_null;
extern struct mpiv_win mpiv_win_null;
extern struct mpiv_message mpiv_message_no_proc;

#define MPI_COMM_WORLD		(&mpiv_comm_world)
#define MPI_COMM_SELF		(&mpiv_comm_self)
#define MPI_COMM_NULL		((MPI_Comm)0)
#define MPI_GROUP_EMPTY		(&mpiv_group_empty)
#define MPI_GROUP_NULL		((MPI_Group)0)
#define MPI_ERRORS_ARE_FATAL	(&mpiv_errors_are_fatal)
#define MPI_ERRORS_RETURN	(&mpiv_errors_return)
#define MPI_ERRHANDLER_NULL	((MPI_Errhandler)0)
#define MPI_INFO_NULL		((MPI_Info)0)
#define MPI_INFO_ENV		(&mpiv_info_env)
#define MPI_REQUEST_NULL	((MPI_Request)0)
#define MPI_WIN_NULL		((MPI_Win)0)
#define MPI_OP_NULL		((MPI_Op)0)
#define MPI_DATATYPE_NULL	((MPI_Datatype)0)
#define MPI_MESSAGE_NULL	((MPI_Message)0)
#define MPI_MESSAGE_NO_PROC	(&mpiv_message_no_proc)

/* datatypes */
#define MPIV_DT(name) extern struct mpiv_datatype mpiv_dt_##name;
MPIV_DT(char) MPIV_DT(signed_char) MPIV_DT(unsigned_char) MPIV_DT(byte)
MPIV_DT(short) MPIV_DT(unsigned_short) MPIV_DT(int) MPIV_DT(unsigned)
MPIV_DT(long) MPIV_DT(unsigned_long) MPIV_DT(long_long) MPIV_DT(unsigned_long_long)
MPIV_DT(float) MPIV_DT(double) MPIV_DT(long_double) MPIV_DT(wchar)
MPIV_DT(c_bool) MPIV_DT(int8_t) MPIV_DT(int16_t) MPIV_DT(int32_t) MPIV_DT(int64_t)
MPIV_DT(uint8_t) MPIV_DT(uint16_t) MPIV_DT(uint32_t) MPIV_DT(uint64_t)
MPIV_DT(c_float_complex) MPIV_DT(c_double_complex) MPIV_DT(c_long_double_complex)
MPIV_DT(aint) MPIV_DT(offset) MPIV_DT(count) MPIV_DT(packed)
MPIV_DT(float_int) MPIV_DT(double_int) MPIV_DT(long_int) MPIV_DT(2int)
MPIV_DT(short_int) MPIV_DT(long_double_int)
MPIV_DT(integer) MPIV_DT(real) MPIV_DT(double_precision) MPIV_DT(complex)
MPIV_DT(double_complex) MPIV_DT(logical) MPIV_DT(character)
MPIV_DT(integer1) MPIV_DT(integer2) MPIV_DT(integer4) MPIV_DT(integer8)
MPIV_DT(real4) MPIV_DT(real8) MPIV_DT(complex8) MPIV_DT(complex16)
MPIV_DT(2integer) MPIV_DT(2real) MPIV_DT(2double_precision)
#undef MPIV_DT

#define MPI_CHAR		(&mpiv_dt_char)
#define MPI_SIGNED_CHAR		(&mpiv_dt_signed_char)
#define MPI_UNSIGNED_CHAR	(&mpiv_dt_unsigned_char)
#define MPI_BYTE		(&mpiv_dt_byte)
#define MPI_SHORT		(&mpiv_dt_short)
#define MPI_UNSIGNED_SHORT	(&mpiv_dt_unsigned_short)
#define MPI_INT			(&mpiv_dt_int)
#define MPI_UNSIGNED		(&mpiv_dt_unsigned)
#define MPI_LONG		(&mpiv_dt_long)
#define MPI_UNSIGNED_LONG	(&mpiv_dt_unsigned_long)
#define MPI_LONG_LONG_INT	(&mpiv_dt_long_long)
#define MPI_LONG_LONG		(&mpiv_dt_long_long)
#define MPI_UNSIGNED_LONG_LONG	(&mpiv_dt_unsigned_long_long)
#define MPI_FLOAT		(&mpiv_dt_float)
#define MPI_DOUBLE		(&mpiv_dt_double)
#define MPI_LONG_DOUBLE		(&mpiv_dt_long_double)
#define MPI_WCHAR		(&mpiv_dt_wchar)
#define MPI_C_BOOL		(&mpiv_dt_c_bool)
#define MPI_INT8_T		(&mpiv_dt_int8_t)
#define MPI_INT16_T		(&mpiv_dt_int16_t)
#define MPI_INT32_T		(&mpiv_dt_int32_t)
#define MPI_INT64_T		(&mpiv_dt_int64_t)
#define MPI_UINT8_T		(&mpiv_dt_uint8_t)
#define MPI_UINT16_T		(&mpiv_dt_uint16_t)
#define MPI_UINT32_T		(&mpiv_dt_uint32_t)
#define MPI_UINT64_T		(&mpiv_dt_uint64_t)
#define MPI_C_COMPLEX		(&mpiv_dt_c_float_complex)
#define MPI_C_FLOAT_COMPLEX	(&mpiv_dt_c_float_complex)
#define MPI_C_DOUBLE_COMPLEX	(&mpiv_dt_c_double_complex)
#define MPI_C_LONG_DOUBLE_COMPLEX (&mpiv_dt_c_long_double_complex)
#define MPI_AINT		(&mpiv_dt_aint)
#define MPI_OFFSET		(&mpiv_dt_offset)
#define MPI_COUNT		(&mpiv_dt_count)
#define MPI_PACKED		(&mpiv_dt_packed)
#define MPI_FLOAT_INT		(&mpiv_dt_float_int)
#define MPI_DOUBLE_INT		(&mpiv_dt_double_int)
#define MPI_LONG_INT		(&mpiv_dt_long_int)
#define MPI_2INT		(&mpiv_dt_2int)
#define MPI_SHORT_INT		(&mpiv_dt_short_int)
#define MPI_LONG_DOUBLE_INT	(&mpiv_dt_long_double_int)
/* Fortran datatypes (usable from C too, as the standard asks) */
#define MPI_INTEGER		(&mpiv_dt_integer)
#define MPI_REAL		(&mpiv_dt_real)
#define MPI_DOUBLE_PRECISION	(&mpiv_dt_double_precision)
#define MPI_COMPLEX		(&mpiv_dt_complex)
#define MPI_DOUBLE_COMPLEX	(&mpiv_dt_double_complex)
#define MPI_LOGICAL		(&mpiv_dt_logical)
#define MPI_CHARACTER		(&mpiv_dt_character)
#define MPI_INTEGER1		(&mpiv_dt_integer1)
#define MPI_INTEGER2		(&mpiv_dt_integer2)
#define MPI_INTEGER4		(&mpiv_dt_integer4)
#define MPI_INTEGER8		(&mpiv_dt_integer8)
#define MPI_REAL4		(&mpiv_dt_real4)
#define MPI_REAL8		(&mpiv_dt_real8)
#define MPI_COMPLEX8		(&mpiv_dt_complex8)
#define MPI_COMPLEX16		(&mpiv_dt_complex16)
#define MPI_2INTEGER		(&mpiv_dt_2integer)
#define MPI_2REAL		(&mpiv_dt_2real)
#define MPI_2DOUBLE_PRECISION	(&mpiv_dt_2double_precision)

/* ops */
#define MPIV_OP(name) extern struct mpiv_op mpiv_op_##name;
MPIV_OP(max) MPIV_OP(min) MPIV_OP(sum) MPIV_OP(prod) MPIV_OP(land) MPIV_OP(band)
MPIV_OP(lor) MPIV_OP(bor) MPIV_OP(lxor) MPIV_OP(bxor) MPIV_OP(maxloc)
MPIV_OP(minloc) MPIV_OP(replace) MPIV_OP(no_op)
#undef MPIV_OP
#define MPI_MAX		(&mpiv_op_max)
#define MPI_MIN		(&mpiv_op_min)
#define MPI_SUM		(&mpiv_op_sum)
#define MPI_PROD	(&mpiv_op_prod)
#define MPI_LAND	(&mpiv_op_land)
#define MPI_BAND	(&mpiv_op_band)
#define MPI_LOR		(&mpiv_op_lor)
#define MPI_BOR		(&mpiv_op_bor)
#define MPI_LXOR	(&mpiv_op_lxor)
#define MPI_BXOR	(&mpiv_op_bxor)
#define MPI_MAXLOC	(&mpiv_op_maxloc)
#define MPI_MINLOC	(&mpiv_op_minloc)
#define MPI_REPLACE	(&mpiv_op_replace)
#define MPI_NO_OP	(&mpiv_op_no_op)

/* ---- constants ---- */
#define MPI_ANY_SOURCE		(-1)
#define MPI_ANY_TAG		(-1)
#define MPI_PROC_NULL		(-2)
#define MPI_ROOT		(-3)
#define MPI_UNDEFINED		(-32766)
#define MPI_KEYVAL_INVALID	(-1)
#define MPI_BSEND_OVERHEAD	64
#define MPI_MAX_PROCESSOR_NAME	256
#define MPI_MAX_ERROR_STRING	256
#define MPI_MAX_OBJECT_NAME	64
#define MPI_MAX_INFO_KEY	255
#define MPI_MAX_INFO_VAL	1024
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_TAG_UB_VALUE	0x7fffffff

#define MPI_IDENT	0
#define MPI_CONGRUENT	1
#define MPI_SIMILAR	2
#define MPI_UNEQUAL	3

#define MPI_THREAD_SINGLE	0
#define MPI_THREAD_FUNNELED	1
#define MPI_THREAD_SERIALIZED	2
#define MPI_THREAD_MULTIPLE	3

#define MPI_GRAPH	1
#define MPI_CART	2
#define MPI_DIST_GRAPH	3

#define MPI_COMM_TYPE_SHARED	1

/* predefined attribute keys */
#define MPI_TAG_UB		1
#define MPI_HOST		2
#define MPI_IO			3
#define MPI_WTIME_IS_GLOBAL	4
#define MPI_UNIVERSE_SIZE	5
#define MPI_APPNUM		6
#define MPI_LASTUSEDCODE	7

#define MPI_STATUS_IGNORE	((MPI_Status *)0)
#define MPI_STATUSES_IGNORE	((MPI_Status *)0)
#define MPI_IN_PLACE		((void *)1)
#define MPI_BOTTOM		((void *)0)
#define MPI_UNWEIGHTED		((int *)2)
#define MPI_WEIGHTS_EMPTY	((int *)3)
#define MPI_ERRCODES_IGNORE	((int *)0)
#define MPI_ARGV_NULL		((char **)0)
#define MPI_ARGVS_NULL		((char ***)0)

#define MPI_COMBINER_NAMED	1
#define MPI_COMBINER_CONTIGUOUS	2
#define MPI_COMBINER_VECTOR	3
#define MPI_COMBINER_HVECTOR	4
#define MPI_COMBINER_INDEXED	5
#define MPI_COMBINER_HINDEXED	6
#define MPI_COMBINER_STRUCT	7
#define MPI_COMBINER_RESIZED	8
#define MPI_COMBINER_DUP	9
#define MPI_COMBINER_INDEXED_BLOCK 10
#define MPI_COMBINER_HINDEXED_BLOCK 11
#define MPI_COMBINER_SUBARRAY	12
#define MPI_COMBINER_DARRAY	13
#define MPI_COMBINER_F90_REAL	14
#define MPI_COMBINER_F90_COMPLEX 15
#define MPI_COMBINER_F90_INTEGER 16
/* MPI-2's combiners of the Fortran MPI-1 constructors (deprecated):
   never returned, the constructors give the MPI-2 ones */
#define MPI_COMBINER_HVECTOR_INTEGER	17
#define MPI_COMBINER_HINDEXED_INTEGER	18
#define MPI_COMBINER_STRUCT_INTEGER	19
/* MPI_Type_match_size */
#define MPI_TYPECLASS_REAL	1
#define MPI_TYPECLASS_INTEGER	2
#define MPI_TYPECLASS_COMPLEX	3

/* subarray and darray */
#define MPI_ORDER_C		56
#define MPI_ORDER_FORTRAN	57
#define MPI_DISTRIBUTE_BLOCK	121
#define MPI_DISTRIBUTE_CYCLIC	122
#define MPI_DISTRIBUTE_NONE	123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

/* error classes */
#define MPI_SUCCESS		0
#define MPI_ERR_BUFFER		1
#define MPI_ERR_COUNT		2
#define MPI_ERR_TYPE		3
#define MPI_ERR_TAG		4
#define MPI_ERR_COMM		5
#define MPI_ERR_RANK		6
#define MPI_ERR_REQUEST		7
#define MPI_ERR_ROOT		8
#define MPI_ERR_GROUP		9
#define MPI_ERR_OP		10
#define MPI_ERR_TOPOLOGY	11
#define MPI_ERR_DIMS		12
#define MPI_ERR_ARG		13
#define MPI_ERR_UNKNOWN		14
#define MPI_ERR_TRUNCATE	15
#define MPI_ERR_OTHER		16
#define MPI_ERR_INTERN		17
#define MPI_ERR_IN_STATUS	18
#define MPI_ERR_PENDING		19
#define MPI_ERR_KEYVAL		20
#define MPI_ERR_NO_MEM		21
#define MPI_ERR_INFO		22
#define MPI_ERR_INFO_KEY	23
#define MPI_ERR_INFO_VALUE	24
#define MPI_ERR_INFO_NOKEY	25
#define MPI_ERR_WIN		26
#define MPI_ERR_UNSUPPORTED_OPERATION 27
#define MPI_ERR_NOT_SUPPORTED	MPI_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_PROC_FAILED	28	/* lost contact with a Channel Memory */
#define MPI_ERR_SPAWN		48
#define MPI_ERR_PORT		49
#define MPI_ERR_NAME		50
#define MPI_ERR_SERVICE		51
#define MPI_ERR_RMA_SYNC	29
#define MPI_ERR_RMA_RANGE	30
#define MPI_ERR_RMA_ATTACH	31
#define MPI_ERR_RMA_FLAVOR	32
#define MPI_ERR_RMA_CONFLICT	33
#define MPI_ERR_RMA_SHARED	34
#define MPI_ERR_BASE		35
#define MPI_ERR_SIZE		36
#define MPI_ERR_DISP		37
#define MPI_ERR_LOCKTYPE	38
#define MPI_ERR_ASSERT		39
/* MPI-IO */
#define MPI_ERR_FILE		40
#define MPI_ERR_NOT_SAME	41
#define MPI_ERR_AMODE		42
#define MPI_ERR_UNSUPPORTED_DATAREP 43
#define MPI_ERR_NO_SUCH_FILE	44
#define MPI_ERR_FILE_EXISTS	45
#define MPI_ERR_BAD_FILE	46
#define MPI_ERR_ACCESS		47
#define MPI_ERR_NO_SPACE	52
#define MPI_ERR_QUOTA		53
#define MPI_ERR_READ_ONLY	54
#define MPI_ERR_FILE_IN_USE	55
#define MPI_ERR_DUP_DATAREP	56
#define MPI_ERR_CONVERSION	57
#define MPI_ERR_IO		58
#define MPI_ERR_LASTCODE	64

/* ---- user function types ---- */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len,
    MPI_Datatype *datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm *, int *, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_Comm_errhandler_function MPI_Handler_function;
typedef int MPI_Comm_copy_attr_function(MPI_Comm, int, void *, void *, void *,
    int *);
typedef int MPI_Comm_delete_attr_function(MPI_Comm, int, void *, void *);
typedef MPI_Comm_copy_attr_function MPI_Copy_function;
typedef MPI_Comm_delete_attr_function MPI_Delete_function;
typedef int MPI_Type_copy_attr_function(MPI_Datatype, int, void *, void *,
    void *, int *);
typedef int MPI_Type_delete_attr_function(MPI_Datatype, int, void *, void *);
typedef int MPI_Win_copy_attr_function(MPI_Win, int, void *, void *, void *,
    int *);
typedef int MPI_Win_delete_attr_function(MPI_Win, int, void *, void *);
#define MPI_COMM_NULL_COPY_FN	((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN	((MPI_Comm_delete_attr_function *)0)
#define MPI_NULL_COPY_FN	((MPI_Copy_function *)0)
#define MPI_NULL_DELETE_FN	((MPI_Delete_function *)0)
int MPI_COMM_DUP_FN(MPI_Comm, int, void *, void *, void *, int *);
#define MPI_DUP_FN		MPI_COMM_DUP_FN
#define MPI_TYPE_NULL_COPY_FN	((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_NULL_DELETE_FN	((MPI_Type_delete_attr_function *)0)
int MPI_TYPE_DUP_FN(MPI_Datatype, int, void *, void *, void *, int *);
#define MPI_WIN_NULL_COPY_FN	((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_NULL_DELETE_FN	((MPI_Win_delete_attr_function *)0)
int MPI_WIN_DUP_FN(MPI_Win, int, void *, void *, void *, int *);

/* ---- environment ---- */
int MPI_Init(int *argc, char ***argv);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int MPI_Initialized(int *flag);
int MPI_Finalize(void);
int MPI_Finalized(int *flag);
int MPI_Abort(MPI_Comm comm, int errorcode);
int MPI_Query_thread(int *provided);
int MPI_Is_thread_main(int *flag);
double MPI_Wtime(void);
double MPI_Wtick(void);
int MPI_Get_processor_name(char *name, int *resultlen);
int MPI_Get_version(int *version, int *subversion);
int MPI_Get_library_version(char *version, int *resultlen);
int MPI_Pcontrol(const int level, ...);
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
int MPI_Free_mem(void *base);

/* ---- errors ---- */
int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler);
int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler);
int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn,
    MPI_Errhandler *errhandler);
int MPI_Errhandler_create(MPI_Handler_function *fn, MPI_Errhandler *errhandler);
int MPI_Errhandler_free(MPI_Errhandler *errhandler);
int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode);
int MPI_Error_string(int errorcode, char *string, int *resultlen);
int MPI_Error_class(int errorcode, int *errorclass);

/* ---- point to point ---- */
int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest,
    int tag, MPI_Comm comm);
int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest,
    int tag, MPI_Comm comm);
int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest,
    int tag, MPI_Comm comm);
int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest,
    int tag, MPI_Comm comm);
int MPI_Buffer_attach(void *buffer, int size);
int MPI_Buffer_detach(void *buffer_addr, int *size);
int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest,
    int tag, MPI_Comm comm, MPI_Request *request);
int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest,
    int tag, MPI_Comm comm, MPI_Request *request);
int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest,
    int tag, MPI_Comm comm, MPI_Request *request);
int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest,
    int tag, MPI_Comm comm, MPI_Request *request);
int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
    MPI_Comm comm, MPI_Status *status);
int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source,
    int tag, MPI_Comm comm, MPI_Request *request);
int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
    int source, int recvtag, MPI_Comm comm, MPI_Status *status);
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype,
    int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
    MPI_Status *status);
int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest,
    int tag, MPI_Comm comm, MPI_Request *request);
int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source,
    int tag, MPI_Comm comm, MPI_Request *request);
int MPI_Start(MPI_Request *request);
int MPI_Startall(int count, MPI_Request array_of_requests[]);
int MPI_Wait(MPI_Request *request, MPI_Status *status);
int MPI_Waitall(int count, MPI_Request array_of_requests[],
    MPI_Status array_of_statuses[]);
int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index,
    MPI_Status *status);
int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
    int array_of_indices[], MPI_Status array_of_statuses[]);
int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status);
int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
    MPI_Status array_of_statuses[]);
int MPI_Testany(int count, MPI_Request array_of_requests[], int *index,
    int *flag, MPI_Status *status);
int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
    int array_of_indices[], MPI_Status array_of_statuses[]);
int MPI_Test_cancelled(const MPI_Status *status, int *flag);
int MPI_Request_free(MPI_Request *request);
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status);
int MPI_Cancel(MPI_Request *request);
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag,
    MPI_Status *status);
int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype,
    int dest, int tag, MPI_Comm comm, MPI_Request *request);
int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype,
    int dest, int tag, MPI_Comm comm, MPI_Request *request);
int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype,
    int dest, int tag, MPI_Comm comm, MPI_Request *request);
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
    MPI_Status *status);
int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag,
    MPI_Message *message, MPI_Status *status);
int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype,
    MPI_Message *message, MPI_Status *status);
int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype,
    MPI_Message *message, MPI_Request *request);
int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count);
int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype,
    int *count);

/* ---- datatypes ---- */
int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_vector(int count, int blocklength, int stride,
    MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
    MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride,
    MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_indexed(int count, const int array_of_blocklengths[],
    const int array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype);
int MPI_Type_create_indexed_block(int count, int blocklength,
    const int array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype);
int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype);
int MPI_Type_hindexed(int count, int array_of_blocklengths[],
    MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype);
int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
    const MPI_Aint array_of_displacements[],
    const MPI_Datatype array_of_types[], MPI_Datatype *newtype);
int MPI_Type_struct(int count, int array_of_blocklengths[],
    MPI_Aint array_of_displacements[], MPI_Datatype array_of_types[],
    MPI_Datatype *newtype);
int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
    MPI_Datatype *newtype);
int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype);
int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype);
int MPI_Type_create_f90_integer(int r, MPI_Datatype *newtype);
int MPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype);
int MPI_Type_commit(MPI_Datatype *datatype);
int MPI_Type_free(MPI_Datatype *datatype);
int MPI_Type_size(MPI_Datatype datatype, int *size);
int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size);
int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent);
int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb,
    MPI_Aint *true_extent);
int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent);
int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement);
int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement);
int MPI_Type_set_name(MPI_Datatype datatype, const char *name);
int MPI_Type_get_name(MPI_Datatype datatype, char *name, int *resultlen);
int MPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
    MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
    void *extra_state);
int MPI_Type_free_keyval(int *type_keyval);
int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval,
    void *attribute_val);
int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval,
    void *attribute_val, int *flag);
int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval);
int MPI_Get_address(const void *location, MPI_Aint *address);
int MPI_Address(void *location, MPI_Aint *address);
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2);
int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype,
    void *outbuf, int outsize, int *position, MPI_Comm comm);
int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf,
    int outcount, MPI_Datatype datatype, MPI_Comm comm);
int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm,
    int *size);
int MPI_Type_create_hindexed_block(int count, int blocklength,
    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype);
int MPI_Type_create_subarray(int ndims, const int array_of_sizes[],
    const int array_of_subsizes[], const int array_of_starts[], int order,
    MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_create_darray(int size, int rank, int ndims,
    const int array_of_gsizes[], const int array_of_distribs[],
    const int array_of_dargs[], const int array_of_psizes[], int order,
    MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers,
    int *num_addresses, int *num_datatypes, int *combiner);
int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers,
    int max_addresses, int max_datatypes, int array_of_integers[],
    MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]);
int MPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
    MPI_Count *num_addresses, MPI_Count *num_large_counts,
    MPI_Count *num_datatypes, int *combiner);
int MPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
    MPI_Count max_addresses, MPI_Count max_large_counts,
    MPI_Count max_datatypes, int array_of_integers[],
    MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
    MPI_Datatype array_of_datatypes[]);
int MPI_Pack_external(const char datarep[], const void *inbuf, int incount,
    MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,
    MPI_Aint *position);
int MPI_Unpack_external(const char datarep[], const void *inbuf,
    MPI_Aint insize, MPI_Aint *position, void *outbuf, int outcount,
    MPI_Datatype datatype);
int MPI_Pack_external_size(const char datarep[], int incount,
    MPI_Datatype datatype, MPI_Aint *size);

/* ---- large counts (MPI_Count: the MPI-3 "_x" and MPI-4 "_c" forms) ---- */
int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype,
    MPI_Count *count);
int MPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype,
    MPI_Count *count);
int MPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype,
    MPI_Count *count);
int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype,
    int count);
int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype,
    MPI_Count count);
int MPI_Status_set_cancelled(MPI_Status *status, int flag);
int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb,
    MPI_Count *extent);
int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
    MPI_Count *true_extent);
int MPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb,
    MPI_Count *extent);
int MPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb,
    MPI_Count *true_extent);
int MPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size);
int MPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
    int dest, int tag, MPI_Comm comm);
int MPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
    int dest, int tag, MPI_Comm comm);
int MPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype,
    int dest, int tag, MPI_Comm comm, MPI_Request *request);
int MPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source,
    int tag, MPI_Comm comm, MPI_Status *status);
int MPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype,
    int source, int tag, MPI_Comm comm, MPI_Request *request);
int MPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
    MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
    MPI_Comm comm, MPI_Status *status);
int MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype,
    int root, MPI_Comm comm);
int MPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype,
    MPI_Datatype *newtype);
int MPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
    void *outbuf, MPI_Count outsize, MPI_Count *position, MPI_Comm comm);
int MPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position,
    void *outbuf, MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm);
int MPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
    MPI_Count *size);
int MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
    MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);
int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Gather_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
    MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
    MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
    MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount,
    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
    MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Type_vector_c(MPI_Count count, MPI_Count blocklength,
    MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength,
    MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_indexed_c(MPI_Count count,
    const MPI_Count array_of_blocklengths[],
    const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype);
int MPI_Type_create_hindexed_c(MPI_Count count,
    const MPI_Count array_of_blocklengths[],
    const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype);
int MPI_Type_create_struct_c(MPI_Count count,
    const MPI_Count array_of_blocklengths[],
    const MPI_Count array_of_displacements[],
    const MPI_Datatype array_of_types[], MPI_Datatype *newtype);
int MPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb,
    MPI_Count extent, MPI_Datatype *newtype);
int MPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
    const MPI_Count array_of_subsizes[], const MPI_Count array_of_starts[],
    int order, MPI_Datatype oldtype, MPI_Datatype *newtype);
int MPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
    const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype);
int MPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
    const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
    MPI_Datatype *newtype);
int MPI_Type_create_darray_c(int size, int rank, int ndims,
    const MPI_Count array_of_gsizes[], const int array_of_distribs[],
    const int array_of_dargs[], const int array_of_psizes[], int order,
    MPI_Datatype oldtype, MPI_Datatype *newtype);

/* ---- collectives ---- */
int MPI_Barrier(MPI_Comm comm);
int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
    MPI_Comm comm);
int MPI_Reduce(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count,
    MPI_Datatype datatype, MPI_Op op);
int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
    MPI_Comm comm);
int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, const int recvcounts[], const int displs[],
    MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
    MPI_Comm comm);
int MPI_Scatterv(const void *sendbuf, const int sendcounts[],
    const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
    MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, const int recvcounts[], const int displs[],
    MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoallv(const void *sendbuf, const int sendcounts[],
    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
    const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
    MPI_Comm comm);
int MPI_Scan(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Exscan(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf,
    const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf,
    int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Op_create(MPI_User_function *function, int commute, MPI_Op *op);
int MPI_Op_free(MPI_Op *op);
int MPI_Op_commutative(MPI_Op op, int *commute);

/* ---- communicators and groups ---- */
int MPI_Comm_rank(MPI_Comm comm, int *rank);
int MPI_Comm_size(MPI_Comm comm, int *size);
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
    MPI_Comm *newcomm);
int MPI_Comm_free(MPI_Comm *comm);
int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result);
int MPI_Comm_group(MPI_Comm comm, MPI_Group *group);
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
    MPI_Comm *newcomm);
int MPI_Comm_test_inter(MPI_Comm comm, int *flag);
int MPI_Comm_remote_size(MPI_Comm comm, int *size);
int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group);
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader,
    MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm *newintercomm);
int MPI_Intercomm_merge(MPI_Comm intercomm, int high,
    MPI_Comm *newintracomm);
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);
int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info);
int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used);
int MPI_Comm_disconnect(MPI_Comm *comm);
int MPI_Comm_set_name(MPI_Comm comm, const char *name);
int MPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen);
int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val,
    int *flag);
int MPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val);
int MPI_Comm_delete_attr(MPI_Comm comm, int keyval);
int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
    MPI_Comm_delete_attr_function *delete_fn, int *keyval, void *extra_state);
int MPI_Comm_free_keyval(int *keyval);
int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag);
int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val);
int MPI_Attr_delete(MPI_Comm comm, int keyval);
int MPI_Keyval_create(MPI_Copy_function *copy_fn,
    MPI_Delete_function *delete_fn, int *keyval, void *extra_state);
int MPI_Keyval_free(int *keyval);
int MPI_Group_size(MPI_Group group, int *size);
int MPI_Group_rank(MPI_Group group, int *rank);
int MPI_Group_incl(MPI_Group group, int n, const int ranks[],
    MPI_Group *newgroup);
int MPI_Group_excl(MPI_Group group, int n, const int ranks[],
    MPI_Group *newgroup);
int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3],
    MPI_Group *newgroup);
int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3],
    MPI_Group *newgroup);
int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
int MPI_Group_intersection(MPI_Group group1, MPI_Group group2,
    MPI_Group *newgroup);
int MPI_Group_difference(MPI_Group group1, MPI_Group group2,
    MPI_Group *newgroup);
int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
    MPI_Group group2, int ranks2[]);
int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result);
int MPI_Group_free(MPI_Group *group);

/* ---- topologies ---- */
int MPI_Dims_create(int nnodes, int ndims, int dims[]);
int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
    const int periods[], int reorder, MPI_Comm *comm_cart);
int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]);
int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank);
int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source,
    int *rank_dest);
int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[],
    int coords[]);
int MPI_Cartdim_get(MPI_Comm comm, int *ndims);
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm);
int MPI_Topo_test(MPI_Comm comm, int *status);
int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
    const int edges[], int reorder, MPI_Comm *comm_graph);
int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges);
int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[],
    int edges[]);
int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors);
int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors,
    int neighbors[]);
int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[],
    const int edges[], int *newrank);
int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[],
    const int periods[], int *newrank);
int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
    const int sources[], const int *sourceweights, int outdegree,
    const int destinations[], const int *destweights, MPI_Info info,
    int reorder, MPI_Comm *comm_dist_graph);
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
    const int degrees[], const int destinations[], const int *weights,
    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph);
int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree,
    int *outdegree, int *weighted);
/* (weights as pointers: MPI_UNWEIGHTED is not an array) */
int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
    int *sourceweights, int maxoutdegree, int destinations[],
    int *destweights);
int MPI_Neighbor_allgather(const void *sendbuf, int sendcount,
    MPI_Datatype sendtype, void *recvbuf, int recvcount,
    MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount,
    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
    const int displs[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount,
    MPI_Datatype sendtype, void *recvbuf, int recvcount,
    MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
    const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
    MPI_Comm comm);
int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
    const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
    const int recvcounts[], const MPI_Aint rdispls[],
    const MPI_Datatype recvtypes[], MPI_Comm comm);
int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount,
    MPI_Datatype sendtype, void *recvbuf, int recvcount,
    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount,
    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
    const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
    MPI_Request *request);
int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount,
    MPI_Datatype sendtype, void *recvbuf, int recvcount,
    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
    const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
    MPI_Comm comm, MPI_Request *request);
int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
    const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
    const int recvcounts[], const MPI_Aint rdispls[],
    const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request);

/* ---- error classes and codes added by the program ---- */
int MPI_Add_error_class(int *errorclass);
int MPI_Add_error_code(int errorclass, int *errorcode);
int MPI_Add_error_string(int errorcode, const char *string);

/* ---- generalized requests ---- */
typedef int MPI_Grequest_query_function(void *extra_state,
    MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);
int MPI_Grequest_start(MPI_Grequest_query_function *query_fn,
    MPI_Grequest_free_function *free_fn,
    MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
    MPI_Request *request);
int MPI_Grequest_complete(MPI_Request request);
int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype,
    int count);
int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype,
    MPI_Count count);
int MPI_Status_set_cancelled(MPI_Status *status, int flag);

/* ---- info ---- */
int MPI_Info_create(MPI_Info *info);
int MPI_Info_set(MPI_Info info, const char *key, const char *value);
int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value,
    int *flag);
int MPI_Info_delete(MPI_Info info, const char *key);
int MPI_Info_get_nkeys(MPI_Info info, int *nkeys);
int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen,
    int *flag);
int MPI_Info_get_string(MPI_Info info, const char *key, int *buflen,
    char *value, int *flag);
int MPI_Info_get_nthkey(MPI_Info info, int n, char *key);
int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo);
int MPI_Info_free(MPI_Info *info);

/* ---- Fortran handles (fhandle.c): a Fortran handle is a small INTEGER
   naming a slot of a table per kind; predefined handles have fixed
   values (those of mpif.h) ---- */
#define MPI_F_STATUS_SIZE	((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
#define MPI_F_SOURCE		0
#define MPI_F_TAG		1
#define MPI_F_ERROR		2
MPI_Fint MPI_Comm_c2f(MPI_Comm comm);
MPI_Comm MPI_Comm_f2c(MPI_Fint comm);
MPI_Fint MPI_Group_c2f(MPI_Group group);
MPI_Group MPI_Group_f2c(MPI_Fint group);
MPI_Fint MPI_Type_c2f(MPI_Datatype datatype);
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype);
MPI_Fint MPI_Op_c2f(MPI_Op op);
MPI_Op MPI_Op_f2c(MPI_Fint op);
MPI_Fint MPI_Request_c2f(MPI_Request request);
MPI_Request MPI_Request_f2c(MPI_Fint request);
MPI_Fint MPI_Errhandler_c2f(MPI_Errhandler errhandler);
MPI_Errhandler MPI_Errhandler_f2c(MPI_Fint errhandler);
MPI_Fint MPI_Info_c2f(MPI_Info info);
MPI_Info MPI_Info_f2c(MPI_Fint info);
MPI_Fint MPI_Win_c2f(MPI_Win win);
MPI_Win MPI_Win_f2c(MPI_Fint win);
MPI_Fint MPI_Message_c2f(MPI_Message message);
MPI_Message MPI_Message_f2c(MPI_Fint message);
int MPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status);
int MPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status);

/* ---- one-sided (docs/ONESIDED.md): active target; passive target fails
   with MPI_ERR_UNSUPPORTED_OPERATION ---- */
#define MPI_MODE_NOCHECK	1
#define MPI_MODE_NOSTORE	2
#define MPI_MODE_NOPUT		4
#define MPI_MODE_NOPRECEDE	8
#define MPI_MODE_NOSUCCEED	16
#define MPI_LOCK_EXCLUSIVE	234
#define MPI_LOCK_SHARED		235
/* window attributes (MPI_Win_get_attr) */
#define MPI_WIN_BASE		101
#define MPI_WIN_SIZE		102
#define MPI_WIN_DISP_UNIT	103
#define MPI_WIN_CREATE_FLAVOR	104
#define MPI_WIN_MODEL		105
#define MPI_WIN_FLAVOR_CREATE	1
#define MPI_WIN_FLAVOR_ALLOCATE	2
#define MPI_WIN_FLAVOR_DYNAMIC	3
#define MPI_WIN_FLAVOR_SHARED	4
#define MPI_WIN_SEPARATE	1
#define MPI_WIN_UNIFIED		2
typedef void MPI_Win_errhandler_function(MPI_Win *, int *, ...);
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info,
    MPI_Comm comm, MPI_Win *win);
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info,
    MPI_Comm comm, void *baseptr, MPI_Win *win);
int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
    MPI_Comm comm, void *baseptr, MPI_Win *win);
int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size,
    int *disp_unit, void *baseptr);
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win);
int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size);
int MPI_Win_detach(MPI_Win win, const void *base);
int MPI_Win_free(MPI_Win *win);
int MPI_Win_get_group(MPI_Win win, MPI_Group *group);
int MPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val,
    int *flag);
int MPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
    MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
    void *extra_state);
int MPI_Win_free_keyval(int *win_keyval);
int MPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val);
int MPI_Win_delete_attr(MPI_Win win, int win_keyval);
int MPI_Win_set_name(MPI_Win win, const char *name);
int MPI_Win_get_name(MPI_Win win, char *name, int *resultlen);
int MPI_Win_set_info(MPI_Win win, MPI_Info info);
int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used);
int MPI_Win_create_errhandler(MPI_Win_errhandler_function *fn,
    MPI_Errhandler *errhandler);
int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler);
int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler);
int MPI_Win_call_errhandler(MPI_Win win, int errorcode);
int MPI_Win_fence(int assert, MPI_Win win);
int MPI_Win_post(MPI_Group group, int assert, MPI_Win win);
int MPI_Win_start(MPI_Group group, int assert, MPI_Win win);
int MPI_Win_complete(MPI_Win win);
int MPI_Win_wait(MPI_Win win);
int MPI_Win_test(MPI_Win win, int *flag);
int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win);
int MPI_Win_unlock(int rank, MPI_Win win);
int MPI_Win_lock_all(int assert, MPI_Win win);
int MPI_Win_unlock_all(MPI_Win win);
int MPI_Win_flush(int rank, MPI_Win win);
int MPI_Win_flush_all(MPI_Win win);
int MPI_Win_flush_local(int rank, MPI_Win win);
int MPI_Win_flush_local_all(MPI_Win win);
int MPI_Win_sync(MPI_Win win);
int MPI_Put(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Win win);
int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
    int target_rank, MPI_Aint target_disp, int target_count,
    MPI_Datatype target_datatype, MPI_Win win);
int MPI_Accumulate(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
int MPI_Get_accumulate(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, void *result_addr, int result_count,
    MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
int MPI_Fetch_and_op(const void *origin_addr, void *result_addr,
    MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op,
    MPI_Win win);
int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr,
    void *result_addr, MPI_Datatype datatype, int target_rank,
    MPI_Aint target_disp, MPI_Win win);
int MPI_Rput(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Win win,
    MPI_Request *request);
int MPI_Rget(void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Win win,
    MPI_Request *request);
int MPI_Raccumulate(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
    MPI_Request *request);
int MPI_Rget_accumulate(const void *origin_addr, int origin_count,
    MPI_Datatype origin_datatype, void *result_addr, int result_count,
    MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
    int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
    MPI_Request *request);

/* ---- MPI-IO (docs/MPI.md, "Files"): every operation is carried out by
   the job's first Channel Memory; non-blocking calls complete at once ---- */
#define MPI_FILE_NULL		((MPI_File)0)
#define MPI_MODE_CREATE		1
#define MPI_MODE_RDONLY		2
#define MPI_MODE_WRONLY		4
#define MPI_MODE_RDWR		8
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN	32
#define MPI_MODE_EXCL		64
#define MPI_MODE_APPEND		128
#define MPI_MODE_SEQUENTIAL	256
#define MPI_SEEK_SET		600
#define MPI_SEEK_CUR		602
#define MPI_SEEK_END		604
#define MPI_DISPLACEMENT_CURRENT (-54278278)
#define MPI_MAX_DATAREP_STRING	128
typedef void MPI_File_errhandler_function(MPI_File *, int *, ...);
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef int MPI_Datarep_conversion_function(void *userbuf,
    MPI_Datatype datatype, int count, void *filebuf, MPI_Offset position,
    void *extra_state);
typedef int MPI_Datarep_extent_function(MPI_Datatype datatype,
    MPI_Aint *file_extent, void *extra_state);
#define MPI_CONVERSION_FN_NULL	((MPI_Datarep_conversion_function *)0)
int MPI_File_open(MPI_Comm comm, const char *filename, int amode,
    MPI_Info info, MPI_File *fh);
int MPI_File_close(MPI_File *fh);
int MPI_File_delete(const char *filename, MPI_Info info);
int MPI_File_set_size(MPI_File fh, MPI_Offset size);
int MPI_File_preallocate(MPI_File fh, MPI_Offset size);
int MPI_File_get_size(MPI_File fh, MPI_Offset *size);
int MPI_File_get_group(MPI_File fh, MPI_Group *group);
int MPI_File_get_amode(MPI_File fh, int *amode);
int MPI_File_set_info(MPI_File fh, MPI_Info info);
int MPI_File_get_info(MPI_File fh, MPI_Info *info_used);
int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
    MPI_Datatype filetype, const char *datarep, MPI_Info info);
int MPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
    MPI_Datatype *filetype, char *datarep);
int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status);
int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf,
    int count, MPI_Datatype datatype, MPI_Status *status);
int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf,
    int count, MPI_Datatype datatype, MPI_Status *status);
int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf,
    int count, MPI_Datatype datatype, MPI_Status *status);
int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
    MPI_Datatype datatype, MPI_Request *request);
int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf,
    int count, MPI_Datatype datatype, MPI_Request *request);
int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf,
    int count, MPI_Datatype datatype, MPI_Request *request);
int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf,
    int count, MPI_Datatype datatype, MPI_Request *request);
int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
    MPI_Status *status);
int MPI_File_read_all(MPI_File fh, void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status);
int MPI_File_write(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status);
int MPI_File_write_all(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status);
int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
    MPI_Request *request);
int MPI_File_iwrite(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Request *request);
int MPI_File_iread_all(MPI_File fh, void *buf, int count,
    MPI_Datatype datatype, MPI_Request *request);
int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Request *request);
int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence);
int MPI_File_get_position(MPI_File fh, MPI_Offset *offset);
int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset,
    MPI_Offset *disp);
int MPI_File_read_shared(MPI_File fh, void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status);
int MPI_File_write_shared(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status);
int MPI_File_iread_shared(MPI_File fh, void *buf, int count,
    MPI_Datatype datatype, MPI_Request *request);
int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Request *request);
int MPI_File_read_ordered(MPI_File fh, void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status);
int MPI_File_write_ordered(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype, MPI_Status *status);
int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence);
int MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset);
int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf,
    int count, MPI_Datatype datatype);
int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status);
int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset,
    const void *buf, int count, MPI_Datatype datatype);
int MPI_File_write_at_all_end(MPI_File fh, const void *buf,
    MPI_Status *status);
int MPI_File_read_all_begin(MPI_File fh, void *buf, int count,
    MPI_Datatype datatype);
int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status);
int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype);
int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status);
int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count,
    MPI_Datatype datatype);
int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status);
int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count,
    MPI_Datatype datatype);
int MPI_File_write_ordered_end(MPI_File fh, const void *buf,
    MPI_Status *status);
int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype,
    MPI_Aint *extent);
int MPI_File_set_atomicity(MPI_File fh, int flag);
int MPI_File_get_atomicity(MPI_File fh, int *flag);
int MPI_File_sync(MPI_File fh);
int MPI_File_create_errhandler(MPI_File_errhandler_function *fn,
    MPI_Errhandler *errhandler);
int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler);
int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler);
int MPI_File_call_errhandler(MPI_File fh, int errorcode);
MPI_Fint MPI_File_c2f(MPI_File file);
MPI_File MPI_File_f2c(MPI_Fint file);
/* fails with MPI_ERR_UNSUPPORTED_OPERATION: "native" (and "internal")
   only */
int MPI_Register_datarep(const char *datarep,
    MPI_Datarep_conversion_function *read_conversion_fn,
    MPI_Datarep_conversion_function *write_conversion_fn,
    MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state);

/* ---- non-blocking collectives ---- */
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request);
int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root,
    MPI_Comm comm, MPI_Request *request);
int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
    MPI_Comm comm, MPI_Request *request);
int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, const int recvcounts[], const int displs[],
    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
    MPI_Comm comm, MPI_Request *request);
int MPI_Iscatterv(const void *sendbuf, const int sendcounts[],
    const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
    MPI_Request *request);
int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, const int recvcounts[], const int displs[],
    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
    MPI_Request *request);
int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[],
    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
    const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
    MPI_Comm comm, MPI_Request *request);
int MPI_Alltoallw(const void *sendbuf, const int sendcounts[],
    const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
    const int recvcounts[], const int rdispls[],
    const MPI_Datatype recvtypes[], MPI_Comm comm);
int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[],
    const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
    const int recvcounts[], const int rdispls[],
    const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request);
int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
    MPI_Request *request);
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request);
int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf,
    const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
    MPI_Request *request);
int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf,
    int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
    MPI_Request *request);
int MPI_Iscan(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request);
int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count,
    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request);
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);

/* ---- MPI_T, spawn: linkable, not supported ---- */
int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs,
    MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm,
    int array_of_errcodes[]);
int MPI_Comm_get_parent(MPI_Comm *parent);
/* dynamic processes: fail with MPI_ERR_SPAWN or
   MPI_ERR_UNSUPPORTED_OPERATION (a job's ranks are fixed at launch) */
int MPI_Comm_spawn_multiple(int count, char *array_of_commands[],
    char **array_of_argv[], const int array_of_maxprocs[],
    const MPI_Info array_of_info[], int root, MPI_Comm comm,
    MPI_Comm *intercomm, int array_of_errcodes[]);
#define MPI_MAX_PORT_NAME	256
int MPI_Open_port(MPI_Info info, char *port_name);
int MPI_Close_port(const char *port_name);
int MPI_Comm_accept(const char *port_name, MPI_Info info, int root,
    MPI_Comm comm, MPI_Comm *newcomm);
int MPI_Comm_connect(const char *port_name, MPI_Info info, int root,
    MPI_Comm comm, MPI_Comm *newcomm);
int MPI_Comm_join(int fd, MPI_Comm *intercomm);
int MPI_Publish_name(const char *service_name, MPI_Info info,
    const char *port_name);
int MPI_Unpublish_name(const char *service_name, MPI_Info info,
    const char *port_name);
int MPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name);

#ifdef __cplusplus
}
#endif
#endif
