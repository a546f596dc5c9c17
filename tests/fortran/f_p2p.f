C     tests/fortran/f_p2p.f: point to point from fixed-form Fortran with
C     include 'mpif.h': blocking send/recv and the status contents,
C     Get_count, MPI_ANY_SOURCE/ANY_TAG, Sendrecv, Isend/Irecv with
C     Wait, Waitall, Waitany, Testall, persistent requests (Send_init,
C     Recv_init, Startall), Probe/Iprobe, Request_free, and
C     MPI_STATUS(ES)_IGNORE. Every check aborts the job on a mismatch;
C     rank 0 prints one line per family.
      PROGRAM FP2P
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, I, J, NEXT, PREV, CNT, IDX, K
      INTEGER STATUS(MPI_STATUS_SIZE)
      INTEGER STATS(MPI_STATUS_SIZE, 4)
      INTEGER REQS(4)
      INTEGER IBUF(100), JBUF(100)
      DOUBLE PRECISION DBUF(50), EBUF(50)
      LOGICAL FLAG

      CALL MPI_INIT(IERR)
      CALL CHK(IERR .EQ. MPI_SUCCESS, 'init')
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      NEXT = MOD(RANK + 1, NP)
      PREV = MOD(RANK + NP - 1, NP)

C     ---- blocking ring with status contents
      DO I = 1, 100
         IBUF(I) = RANK * 1000 + I
      END DO
      IF (MOD(RANK, 2) .EQ. 0) THEN
         CALL MPI_SEND(IBUF, 100, MPI_INTEGER, NEXT, 7,
     &        MPI_COMM_WORLD, IERR)
         CALL MPI_RECV(JBUF, 100, MPI_INTEGER, PREV, MPI_ANY_TAG,
     &        MPI_COMM_WORLD, STATUS, IERR)
      ELSE
         CALL MPI_RECV(JBUF, 100, MPI_INTEGER, MPI_ANY_SOURCE, 7,
     &        MPI_COMM_WORLD, STATUS, IERR)
         CALL MPI_SEND(IBUF, 100, MPI_INTEGER, NEXT, 7,
     &        MPI_COMM_WORLD, IERR)
      END IF
      CALL CHK(STATUS(MPI_SOURCE) .EQ. PREV, 'status source')
      CALL CHK(STATUS(MPI_TAG) .EQ. 7, 'status tag')
      CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, CNT, IERR)
      CALL CHK(CNT .EQ. 100, 'get_count')
      DO I = 1, 100
         CALL CHK(JBUF(I) .EQ. PREV * 1000 + I, 'ring data')
      END DO
      IF (RANK .EQ. 0) PRINT '(A)', 'blocking: ok'

C     ---- sendrecv of doubles, status ignored
      DO I = 1, 50
         DBUF(I) = RANK + I / 4.0D0
      END DO
      CALL MPI_SENDRECV(DBUF, 50, MPI_DOUBLE_PRECISION, NEXT, 3,
     &     EBUF, 50, MPI_DOUBLE_PRECISION, PREV, 3, MPI_COMM_WORLD,
     &     MPI_STATUS_IGNORE, IERR)
      DO I = 1, 50
         CALL CHK(EBUF(I) .EQ. PREV + I / 4.0D0, 'sendrecv data')
      END DO
      IF (RANK .EQ. 0) PRINT '(A)', 'sendrecv: ok'

C     ---- non-blocking: Waitall, then Waitany, then Testall
      CALL MPI_IRECV(JBUF, 10, MPI_INTEGER, PREV, 11,
     &     MPI_COMM_WORLD, REQS(1), IERR)
      CALL MPI_IRECV(JBUF(11), 10, MPI_INTEGER, NEXT, 12,
     &     MPI_COMM_WORLD, REQS(2), IERR)
      CALL MPI_ISEND(IBUF, 10, MPI_INTEGER, NEXT, 11,
     &     MPI_COMM_WORLD, REQS(3), IERR)
      CALL MPI_ISEND(IBUF(11), 10, MPI_INTEGER, PREV, 12,
     &     MPI_COMM_WORLD, REQS(4), IERR)
      CALL MPI_WAITALL(4, REQS, STATS, IERR)
      CALL CHK(IERR .EQ. MPI_SUCCESS, 'waitall')
      DO I = 1, 4
         CALL CHK(REQS(I) .EQ. MPI_REQUEST_NULL, 'waitall null')
      END DO
      CALL CHK(STATS(MPI_SOURCE, 1) .EQ. PREV, 'waitall src 1')
      CALL CHK(STATS(MPI_SOURCE, 2) .EQ. NEXT, 'waitall src 2')
      CALL CHK(STATS(MPI_TAG, 2) .EQ. 12, 'waitall tag 2')
      DO I = 1, 10
         CALL CHK(JBUF(I) .EQ. PREV * 1000 + I, 'irecv 1')
         CALL CHK(JBUF(10 + I) .EQ. NEXT * 1000 + 10 + I, 'irecv 2')
      END DO

      CALL MPI_IRECV(JBUF, 5, MPI_INTEGER, PREV, 21,
     &     MPI_COMM_WORLD, REQS(1), IERR)
      CALL MPI_ISEND(IBUF, 5, MPI_INTEGER, NEXT, 21,
     &     MPI_COMM_WORLD, REQS(2), IERR)
      K = 0
      DO J = 1, 2
         CALL MPI_WAITANY(2, REQS, IDX, STATUS, IERR)
         CALL CHK(IDX .GE. 1 .AND. IDX .LE. 2, 'waitany index')
         CALL CHK(REQS(IDX) .EQ. MPI_REQUEST_NULL, 'waitany null')
         K = K + IDX
      END DO
      CALL CHK(K .EQ. 3, 'waitany both')
      CALL MPI_WAITANY(2, REQS, IDX, STATUS, IERR)
      CALL CHK(IDX .EQ. MPI_UNDEFINED, 'waitany undefined')

      CALL MPI_IRECV(JBUF, 5, MPI_INTEGER, PREV, 22,
     &     MPI_COMM_WORLD, REQS(1), IERR)
      CALL MPI_ISEND(IBUF, 5, MPI_INTEGER, NEXT, 22,
     &     MPI_COMM_WORLD, REQS(2), IERR)
      FLAG = .FALSE.
      DO WHILE (.NOT. FLAG)
         CALL MPI_TESTALL(2, REQS, FLAG, MPI_STATUSES_IGNORE, IERR)
      END DO
      CALL CHK(REQS(1) .EQ. MPI_REQUEST_NULL, 'testall null')
      IF (RANK .EQ. 0) PRINT '(A)', 'nonblocking: ok'

C     ---- persistent: 3 rounds on the same requests
      CALL MPI_RECV_INIT(JBUF, 20, MPI_INTEGER, PREV, 31,
     &     MPI_COMM_WORLD, REQS(1), IERR)
      CALL MPI_SEND_INIT(IBUF, 20, MPI_INTEGER, NEXT, 31,
     &     MPI_COMM_WORLD, REQS(2), IERR)
      DO J = 1, 3
         DO I = 1, 20
            IBUF(I) = RANK * 100 + J * 20 + I
         END DO
         CALL MPI_STARTALL(2, REQS, IERR)
         CALL MPI_WAITALL(2, REQS, STATS, IERR)
         CALL CHK(REQS(1) .NE. MPI_REQUEST_NULL, 'persistent kept')
         DO I = 1, 20
            CALL CHK(JBUF(I) .EQ. PREV * 100 + J * 20 + I,
     &           'persistent data')
         END DO
      END DO
      CALL MPI_REQUEST_FREE(REQS(1), IERR)
      CALL MPI_REQUEST_FREE(REQS(2), IERR)
      CALL CHK(REQS(1) .EQ. MPI_REQUEST_NULL, 'request_free')
      IF (RANK .EQ. 0) PRINT '(A)', 'persistent: ok'

C     ---- probe: size from the status, then receive
      CALL MPI_SEND(IBUF, 3 + RANK, MPI_INTEGER, NEXT, 41,
     &     MPI_COMM_WORLD, IERR)
      CALL MPI_PROBE(MPI_ANY_SOURCE, 41, MPI_COMM_WORLD, STATUS, IERR)
      CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, CNT, IERR)
      CALL CHK(CNT .EQ. 3 + PREV, 'probe count')
      CALL CHK(STATUS(MPI_SOURCE) .EQ. PREV, 'probe source')
      CALL MPI_RECV(JBUF, CNT, MPI_INTEGER, STATUS(MPI_SOURCE), 41,
     &     MPI_COMM_WORLD, STATUS, IERR)
      CALL MPI_IPROBE(MPI_ANY_SOURCE, 41, MPI_COMM_WORLD, FLAG,
     &     STATUS, IERR)
      CALL CHK(.NOT. FLAG, 'iprobe none left')
      IF (RANK .EQ. 0) PRINT '(A)', 'probe: ok'

      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      CALL MPI_FINALIZE(IERR)
      CALL CHK(IERR .EQ. MPI_SUCCESS, 'finalize')
      END

      SUBROUTINE CHK(OK, WHAT)
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      LOGICAL OK
      CHARACTER*(*) WHAT
      INTEGER IERR
      IF (.NOT. OK) THEN
         WRITE (0, '(A,A)') 'FAIL: ', WHAT
         CALL MPI_ABORT(MPI_COMM_WORLD, 3, IERR)
      END IF
      END
