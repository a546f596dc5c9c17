# mpiv: plain GNU make, outputs under $(BUILD) (default build/).
#
#   make            build mpiv, libmpi.{so,a}, mpi.h, mpivcc/mpicc/mpirun/mpiexec
#   make test       install missing deps, build, run every test (+ ASan/UBSan pass)
#   make demo       install missing deps, build, run a job while killing ranks
#   make asan       the same build with AddressSanitizer + UBSan in build-asan/
#   make bench      benchmarks against Open MPI (not part of make test)
#   make soak       SOAK_MINUTES (30) of random rank, node and CM kills over
#                   mixed programs on one deployment (not part of make test)
#   make fuzz       build the libFuzzer targets (clang)
#
# Fortran: the bindings (mpi_send_ ...) are C made by awk from
# libmpi-lite/fortran/functions.tbl and are always in libmpi, as is
# mpif.h; the `mpi` and `mpi_f08` modules, mpifort/mpif90/mpif77 and the
# Fortran tests need gfortran (FORTRAN=...) and are skipped, with a line saying so,
# without it.
#
# Every *.c under runtime/ channel-memory/ dispatcher/ checkpoint-server/
# node-agent/ cli/ goes into the mpiv binary (cli/main.c is its main);
# every *.c under libmpi-lite/ into libmpi. Only runtime/ and libmpi-lite/
# are on the include path: a daemon's or the front end's header is
# included by its relative path ("../node-agent/node.h"), so that the
# shared code in runtime/ cannot reach one without it showing.

BUILD    ?= build
CC       ?= cc
OPT      ?= -O2 -g
SAN      ?=
CFLAGS   ?=
WARN     := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
BASEFLAGS := -std=gnu11 $(OPT) $(WARN) $(SAN) -D_GNU_SOURCE -fPIC \
	-I$(BUILD)/gen -Iruntime -Ilibmpi-lite $(CFLAGS)
LDSAN    := $(SAN)

ABS_BUILD := $(abspath $(BUILD))

GEN_C    := $(BUILD)/gen/mpiv.pb-c.c
GEN_H    := $(BUILD)/gen/mpiv.pb-c.h
GEN_O    := $(BUILD)/obj/gen/mpiv.pb-c.o

# Sources shared by the library and the daemons (framing, sockets).
SHARED_SRCS := runtime/frame.c runtime/net.c runtime/auth.c runtime/auth_keys.c runtime/match.c \
	runtime/seal.c runtime/auth_client.c libmpi-lite/digest.c
SHARED_SRCS += runtime/auth_rotate.c
DAEMON_SRCS := $(filter-out $(SHARED_SRCS),$(wildcard runtime/*.c channel-memory/*.c \
	dispatcher/*.c checkpoint-server/*.c node-agent/*.c cli/*.c))
LIB_SRCS    := $(filter-out $(SHARED_SRCS),$(wildcard libmpi-lite/*.c))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
SHARED_OBJS := $(call obj,$(SHARED_SRCS)) $(GEN_O)
DAEMON_OBJS := $(call obj,$(DAEMON_SRCS))
LIB_OBJS    := $(call obj,$(LIB_SRCS)) $(BUILD)/obj/gen/fortran_wrap.o
MAIN_OBJ    := $(call obj,cli/main.c)

MPIV      := $(BUILD)/bin/mpiv
RTLIB     := $(BUILD)/lib/libmpivrt.a
LIBMPI_SO := $(BUILD)/lib/libmpi.so
LIBMPI_A  := $(BUILD)/lib/libmpi.a
MPI_H     := $(BUILD)/include/mpi.h
MPIVCC    := $(BUILD)/bin/mpivcc

# Fortran (see the top)
FORTRAN   ?= gfortran
HAVE_FORTRAN := $(shell command -v $(FORTRAN) 2>/dev/null)
FTBL      := libmpi-lite/fortran/functions.tbl
FGEN      := libmpi-lite/fortran/fgen.awk
FWRAP_C   := $(BUILD)/gen/fortran_wrap.c
FCONST    := $(BUILD)/gen/fconst
MPIF_H    := $(BUILD)/include/mpif.h
MPI_F90   := $(BUILD)/gen/mpi.f90
MPI_MOD   := $(BUILD)/include/mpi.mod
MPI_F08_F90 := $(BUILD)/gen/mpi_f08.f90
MPI_F08_MOD := $(BUILD)/include/mpi_f08.mod
LIBMPI_F08  := $(BUILD)/lib/libmpi_f08.a
MPIFORT   := $(BUILD)/bin/mpifort
# each tests/fortran/NAME.F90 or .F is built twice: NAME with `use mpi`,
# NAME_mpif with include 'mpif.h' (-DMPIV_MPIF)
# (tests/fortran/*.f90, the mpi_f08 ones, once)
FTEST_SRCS := $(wildcard tests/fortran/*.F90 tests/fortran/*.F)
FTEST_BINS := $(foreach t,$(basename $(notdir $(FTEST_SRCS))),$(BUILD)/tests/fortran/$(t) $(BUILD)/tests/fortran/$(t)_mpif) \
	$(patsubst tests/fortran/%.f90,$(BUILD)/tests/fortran/%,$(wildcard tests/fortran/*.f90))
ifeq ($(HAVE_FORTRAN),)
FORTRAN_ALL   := fortran-skip
FORTRAN_TESTS :=
else
FORTRAN_ALL   := $(MPI_MOD) $(MPI_F08_MOD) $(LIBMPI_F08) $(MPIFORT)
FORTRAN_TESTS := $(FTEST_BINS)
endif

DAEMON_LIBS := -lev -lprotobuf-c -lzstd -lsodium -lcrypto -lm

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))
MPI_TEST_SRCS := $(wildcard tests/mpi/*.c)
MPI_TEST_BINS := $(patsubst tests/mpi/%.c,$(BUILD)/tests/mpi/%,$(MPI_TEST_SRCS))
# test tools (tests/tools/*.c): stand-alone programs, libc only
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TOOL_SRCS))

.PHONY: all test demo asan bench soak fuzz deps clean tests-build fortran-skip
all: $(MPIV) $(LIBMPI_SO) $(LIBMPI_A) $(MPI_H) $(MPIVCC) $(MPIF_H) $(FORTRAN_ALL)

$(GEN_C) $(GEN_H): runtime/proto/mpiv.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen -Iruntime/proto runtime/proto/mpiv.proto

$(BUILD)/obj/%.o: %.c $(GEN_H) $(wildcard runtime/*.h channel-memory/*.h dispatcher/*.h \
	checkpoint-server/*.h node-agent/*.h cli/*.h libmpi-lite/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) -c -o $@ $<

$(GEN_O): $(GEN_C)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) -w -c -o $@ $<

$(RTLIB): $(filter-out $(MAIN_OBJ),$(DAEMON_OBJS)) $(SHARED_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(MPIV): $(MAIN_OBJ) $(RTLIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $(MAIN_OBJ) $(RTLIB) $(DAEMON_LIBS)

# What libmpi.so exports: the MPI_* and PMPI_* functions and the
# predefined objects mpi.h declares (extern struct mpiv_...), nothing of
# the library's insides (framing, auth, the generated protobuf code), so
# that an application's own symbols of those names never collide;
# protobuf-c is linked in statically and hidden the same way, so that an
# application using another protobuf-c cannot interpose on it.
LIBMPI_MAP := $(BUILD)/lib/libmpi.map
$(LIBMPI_MAP): libmpi-lite/mpi.h Makefile
	@mkdir -p $(dir $@)
	{ echo '{ global: MPI_*; PMPI_*; mpi_*; pmpi_*;'; \
	  $(CC) -E -P -x c libmpi-lite/mpi.h | tr '\n' ' ' | tr ';' '\n' | \
	  sed -n 's/^ *extern struct mpiv_[a-z_]* //p' | tr ',' '\n' | \
	  sed 's/[[:space:]]//g' | grep . | sed 's/$$/;/'; \
	  echo 'local: *; };'; } > $@.tmp && mv $@.tmp $@

# The profiling interface: each MPI_ function mpi.h declares is also
# PMPI_ (pmpi.names lists them, from mpi.h preprocessed). In libmpi.so
# PMPI_X is MPI_X (pmpi.ld: assignments, an implicit linker script) and
# the library's own calls bind inside it (-Bsymbolic-functions): a tool
# that defines MPI_X and calls PMPI_X sees the application's calls, not
# those the library makes (a collective's sends, the Fortran bindings').
PMPI_NAMES := $(BUILD)/gen/pmpi.names
$(PMPI_NAMES): libmpi-lite/mpi.h
	@mkdir -p $(dir $@)
	$(CC) -E -P -x c $< | tr '\n' ' ' | tr ';' '\n' | \
	  grep -v '^ *typedef' | grep -o '\bMPI_[A-Za-z0-9_]* *(' | \
	  sed 's/ *(//' | sort -u > $@.tmp && mv $@.tmp $@
$(BUILD)/gen/pmpi.ld: $(PMPI_NAMES)
	sed 's/.*/P& = &;/' $< > $@
$(BUILD)/gen/pmpi-static.ld: $(PMPI_NAMES)
	sed 's/.*/& = P&;/' $< > $@
$(BUILD)/gen/pmpi.rename: $(PMPI_NAMES)
	sed 's/.*/& P&/' $< > $@

$(LIBMPI_SO): $(LIB_OBJS) $(SHARED_OBJS) $(LIBMPI_MAP) $(BUILD)/gen/pmpi.ld
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -shared -Wl,--version-script=$(LIBMPI_MAP) \
		-Wl,-Bsymbolic-functions -o $@ \
		$(LIB_OBJS) $(SHARED_OBJS) $(BUILD)/gen/pmpi.ld \
		-Wl,-Bstatic -lprotobuf-c -Wl,-Bdynamic -lsodium -lcrypto -lm

# libmpi.a hides the same insides: one relocatable object of the library,
# its shared parts and protobuf-c's members it uses, in which every
# global symbol but what libmpi.so exports becomes local. Its functions
# are PMPI_X (renamed, the library's own calls with them) and MPI_X a
# weak alias of each, as are the Fortran bindings mpi_*_: a tool's own
# MPI_X wins over the alias at link time.
LIBMPI_R := $(BUILD)/obj/libmpi-r.o
$(LIBMPI_A): $(LIB_OBJS) $(SHARED_OBJS) $(LIBMPI_SO) $(BUILD)/gen/pmpi-static.ld $(BUILD)/gen/pmpi.rename
	@mkdir -p $(dir $@)
	ld -r -o $(LIBMPI_R) $(LIB_OBJS) $(SHARED_OBJS) \
		$$($(CC) -print-file-name=libprotobuf-c.a)
	objcopy --redefine-syms=$(BUILD)/gen/pmpi.rename $(LIBMPI_R) $(LIBMPI_R).p
	ld -r -o $(LIBMPI_R) $(LIBMPI_R).p $(BUILD)/gen/pmpi-static.ld
	nm -D --defined-only $(LIBMPI_SO) | awk '{ print $$3 }' > $(LIBMPI_R).keep
	grep -E '^(MPI_|mpi_)' $(LIBMPI_R).keep > $(LIBMPI_R).weak
	objcopy --keep-global-symbols=$(LIBMPI_R).keep \
		--weaken-symbols=$(LIBMPI_R).weak $(LIBMPI_R) $(LIBMPI_R).tmp
	rm -f $(LIBMPI_R).p
	mv -f $(LIBMPI_R).tmp $(BUILD)/obj/libmpi.o && rm -f $@ && ar rcs $@ $(BUILD)/obj/libmpi.o

# The installed mpi.h declares PMPI_X too, of MPI_X's type, before the
# end of its extern "C" block.
$(MPI_H): libmpi-lite/mpi.h $(PMPI_NAMES)
	@mkdir -p $(dir $@)
	awk -v names=$(PMPI_NAMES) 'FNR == NR { h[++n] = $$0; if ($$0 ~ /^#ifdef __cplusplus/) last = n; next } \
	  END { for (i = 1; i <= n; i++) { if (i == last) { \
	    print "/* the profiling interface: PMPI_X is MPI_X */"; \
	    while ((getline f < names) > 0) print "extern __typeof__(" f ") P" f ";"; } \
	    print h[i] } }' $< > $@.tmp && mv $@.tmp $@

# ---- Fortran -----------------------------------------------------------
$(FWRAP_C): $(FTBL) $(FGEN)
	@mkdir -p $(dir $@)
	awk -v out=c -f $(FGEN) $(FTBL) > $@.tmp && mv $@.tmp $@

# A table line naming a C function libmpi lacks fails here.
$(BUILD)/obj/gen/fortran_wrap.o: $(FWRAP_C) libmpi-lite/fortran.h libmpi-lite/impl.h libmpi-lite/mpi.h
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) -Werror=implicit-function-declaration -c -o $@ $<

# fconst runs here at build time: no sanitizer, the build machine's cc.
$(FCONST): libmpi-lite/fortran/fconst.c libmpi-lite/fortran.h libmpi-lite/mpi.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Ilibmpi-lite -o $@ $<

$(MPIF_H): $(FCONST)
	@mkdir -p $(dir $@)
	$(FCONST) mpif > $@.tmp && mv $@.tmp $@

FPROCS := libmpi-lite/fortran/procs.f90
$(MPI_F90): $(FCONST) $(FTBL) $(FGEN) $(FPROCS)
	@mkdir -p $(dir $@)
	{ echo 'module mpi'; echo '  implicit none'; $(FCONST) module; \
	  echo '  interface'; awk -v out=f90 -f $(FGEN) $(FTBL); \
	  echo '  end interface'; echo 'contains'; cat $(FPROCS); \
	  echo 'end module mpi'; } > $@.tmp && mv $@.tmp $@

# (its MPI_SIZEOF and MPI_F_SYNC_REG are compiled code: in libmpi_f08.a too)
$(MPI_MOD): $(MPI_F90)
	@mkdir -p $(dir $@) $(BUILD)/obj/gen
	$(FORTRAN) -c -fPIC -O2 -J$(BUILD)/include -o $(BUILD)/obj/gen/mpi_mod.o $<
	touch $@	# gfortran keeps an unchanged .mod's old time

# mpi_f08: its types and constants from fconst, the rest (PMPI_
# interfaces, one module procedure per table line) from fgen.awk; its
# procedures are compiled code, in libmpi_f08.a (mpifort links it).
$(MPI_F08_F90): $(FCONST) $(FTBL) $(FGEN) $(FPROCS)
	@mkdir -p $(dir $@)
	{ echo 'module mpi_f08'; echo '  implicit none'; $(FCONST) f08; \
	  awk -v out=f08 -f $(FGEN) $(FTBL); \
	  sed -e '/^!/d' \
	      -e 's/integer, intent(out) :: ierror/integer, optional, intent(out) :: ierror/' \
	      -e 's/ierror = MPI_SUCCESS/if (present(ierror)) ierror = MPI_SUCCESS/' \
	      -e 's/MPI_SIZEOF/MPI_Sizeof/' -e 's/MPI_F_SYNC_REG/MPI_F_sync_reg/' $(FPROCS); \
	  echo 'end module mpi_f08'; } > $@.tmp && mv $@.tmp $@

$(MPI_F08_MOD): $(MPI_F08_F90)
	@mkdir -p $(BUILD)/include $(BUILD)/obj/gen
	$(FORTRAN) -c -fPIC -O2 -J$(BUILD)/include -o $(BUILD)/obj/gen/mpi_f08.o $<
	touch $@

$(LIBMPI_F08): $(MPI_F08_MOD) $(MPI_MOD)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $(BUILD)/obj/gen/mpi_f08.o $(BUILD)/obj/gen/mpi_mod.o

$(MPIFORT): libmpi-lite/mpifort.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's|@BUILD@|$(ABS_BUILD)|g' -e 's|@SAN@|$(SAN)|g' \
		-e 's|@FORTRAN@|$(FORTRAN)|g' $< > $@
	chmod +x $@
	ln -sf mpifort $(BUILD)/bin/mpif90
	ln -sf mpifort $(BUILD)/bin/mpif77

fortran-skip:
	@echo "fortran: $(FORTRAN) not found: mpifort, mpif90, mpif77, the mpi and mpi_f08 modules and the Fortran tests are not built (deploy/install-deps.sh installs gfortran)"

$(MPIVCC): libmpi-lite/mpivcc.in Makefile
	@mkdir -p $(dir $@)
	sed -e 's|@BUILD@|$(ABS_BUILD)|g' -e 's|@SAN@|$(SAN)|g' $< > $@
	chmod +x $@
	ln -sf mpivcc $(BUILD)/bin/mpicc
	printf '#!/bin/sh\n# mpirun: an alias of "mpiv run"\nexec "%s/bin/mpiv" run "$$@"\n' '$(ABS_BUILD)' > $(BUILD)/bin/mpirun
	chmod +x $(BUILD)/bin/mpirun
	ln -sf mpirun $(BUILD)/bin/mpiexec

# ---- tests -------------------------------------------------------------
$(BUILD)/tests/unit/%: tests/unit/%.c $(RTLIB) $(LIB_OBJS) $(GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(BASEFLAGS) -Itests -o $@ $< $(RTLIB) $(DAEMON_LIBS) -lcmocka

$(BUILD)/tests/mpi/%: tests/mpi/%.c $(LIBMPI_SO) $(LIBMPI_A) $(MPI_H) $(MPIVCC) $(wildcard tests/mpi/*.h)
	@mkdir -p $(dir $@)
	$(MPIVCC) -O1 -g -Wall -o $@ $<

FTEST_DEPS := $(LIBMPI_SO) $(LIBMPI_A) $(MPIF_H) $(MPI_MOD) $(MPI_F08_MOD) $(LIBMPI_F08) $(MPIFORT) $(wildcard tests/fortran/*.inc)
$(BUILD)/tests/fortran/%_mpif: tests/fortran/%.F90 $(FTEST_DEPS)
	@mkdir -p $(dir $@)
	$(MPIFORT) -O1 -g -w -DMPIV_MPIF -o $@ $<

$(BUILD)/tests/fortran/%_mpif: tests/fortran/%.F $(FTEST_DEPS)
	@mkdir -p $(dir $@)
	$(MPIFORT) -O1 -g -w -DMPIV_MPIF -o $@ $<

$(BUILD)/tests/fortran/%: tests/fortran/%.F90 $(FTEST_DEPS)
	@mkdir -p $(dir $@)
	$(MPIFORT) -O1 -g -Wall -o $@ $<

$(BUILD)/tests/fortran/%: tests/fortran/%.F $(FTEST_DEPS)
	@mkdir -p $(dir $@)
	$(MPIFORT) -O1 -g -o $@ $<

$(BUILD)/tests/fortran/%: tests/fortran/%.f90 $(FTEST_DEPS)
	@mkdir -p $(dir $@)
	$(MPIFORT) -O1 -g -Wall -o $@ $<

$(BUILD)/tests/tools/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(OPT) $(WARN) $(SAN) -D_GNU_SOURCE -o $@ $<

tests-build: all $(UNIT_BINS) $(MPI_TEST_BINS) $(FORTRAN_TESTS) $(TOOL_BINS)

deps:
	@sh deploy/install-deps.sh --if-missing

# `make test` builds with one job per core unless make was given -j
# (CI runs plain `make test`; a serial build of both trees took a quarter
# of its time on 2 cores).
PAR = $$(case "$$MAKEFLAGS" in *-j*) ;; *) echo -j$$(nproc 2>/dev/null || echo 2) ;; esac)

test: deps
	$(MAKE) $(PAR) tests-build
	$(MAKE) $(PAR) BUILD=build-asan OPT="-O1 -g" SAN="-fsanitize=address,undefined -fno-omit-frame-pointer" tests-build
	sh tests/run.sh

asan:
	$(MAKE) $(PAR) BUILD=build-asan OPT="-O1 -g" SAN="-fsanitize=address,undefined -fno-omit-frame-pointer" tests-build
	MPIV_BUILD=build-asan sh tests/run.sh

demo: deps
	$(MAKE) $(PAR) all
	sh tests/demo.sh

# (stdin from /dev/null: mpiv run hands its stdin to rank 0 and waits
# for its end)
bench: deps
	$(MAKE) $(PAR) all
	sh bench/run.sh $(BENCH_ARGS) < /dev/null
	bash bench/ft.sh < /dev/null
	bash bench/ckpt.sh < /dev/null
	bash bench/nodeloss.sh < /dev/null
	bash bench/disp_load.sh < /dev/null

soak: deps
	$(MAKE) $(PAR) all
	bash tests/soak.sh

fuzz:
	$(MAKE) -f tests/fuzz/fuzz.mk BUILD=$(BUILD)

clean:
	rm -rf build build-asan build-fuzz
