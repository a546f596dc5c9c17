# libFuzzer targets (clang). Invoked by `make fuzz`:
#   make -f tests/fuzz/fuzz.mk BUILD=build     -> build-fuzz/fuzz_*
# Run them briefly with tests/fuzz/run-short.sh.

BUILD    ?= build
FB       := $(BUILD)-fuzz
CLANG    ?= clang
FUZZFLAGS := -std=gnu11 -O1 -g -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-omit-frame-pointer -I$(FB)/gen -Iruntime -Ilibmpi-lite -Wall -Wextra \
	-Wno-unused-parameter -Wno-missing-field-initializers

GEN_C := $(FB)/gen/mpiv.pb-c.c
GEN_H := $(FB)/gen/mpiv.pb-c.h
FRAME_SRCS := runtime/frame.c runtime/seal.c $(GEN_C)
CM_SRCS := runtime/match.c runtime/conn.c runtime/pbuf.c runtime/conn_auth.c runtime/conn_gate.c runtime/daemon.c runtime/frame.c runtime/net.c runtime/log.c \
	runtime/auth.c runtime/auth_keys.c runtime/seal.c runtime/srvfault.c runtime/dial.c libmpi-lite/digest.c $(wildcard channel-memory/*.c) $(GEN_C)
CS_SRCS := runtime/conn.c runtime/pbuf.c runtime/conn_auth.c runtime/conn_gate.c runtime/daemon.c runtime/frame.c runtime/net.c runtime/log.c \
	runtime/auth.c runtime/auth_keys.c runtime/seal.c runtime/cksum.c runtime/srvfault.c runtime/dial.c $(wildcard checkpoint-server/*.c) \
	node-agent/criu_delta.c $(GEN_C)

DISP_SRCS := runtime/conn.c runtime/pbuf.c runtime/conn_auth.c runtime/conn_gate.c runtime/daemon.c runtime/frame.c runtime/net.c runtime/log.c \
	runtime/auth.c runtime/auth_keys.c runtime/seal.c $(wildcard dispatcher/*.c) $(GEN_C)
# libmpi-lite whole, as libmpi.so has it (fuzz_tp_read: the rank's reader).
LIB_SRCS := $(wildcard libmpi-lite/*.c) runtime/frame.c runtime/net.c runtime/auth.c \
	runtime/auth_keys.c runtime/seal.c runtime/auth_client.c $(GEN_C)
# Secret files of several keys (auth_keys.c reads every format through it).
CM_SRCS += runtime/auth_rotate.c
CS_SRCS += runtime/auth_rotate.c
DISP_SRCS += runtime/auth_rotate.c
LIB_SRCS += runtime/auth_rotate.c

.PHONY: all
all: $(FB)/fuzz_frame $(FB)/fuzz_cm_conn $(FB)/fuzz_cm_store $(FB)/fuzz_cs_conn $(FB)/fuzz_disp_conn \
	$(FB)/fuzz_tp_read $(FB)/fuzz_dp_read $(FB)/fuzz_priv $(FB)/fuzz_cs_delta \
	$(FB)/fuzz_jsonr \
	$(FB)/fuzz_win_apply $(FB)/fuzz_seal $(FB)/fuzz_secret_file

$(GEN_C) $(GEN_H): runtime/proto/mpiv.proto
	@mkdir -p $(FB)/gen
	protoc-c --c_out=$(FB)/gen -Iruntime/proto runtime/proto/mpiv.proto

# Every source is compiled once into $(FB)/obj/ and the targets link what
# they need (libmpi-lite goes into three targets, the CM's sources into
# two): `make -j2` builds the set in about a third of the time it took
# when each target compiled its sources itself.
OBJ := $(FB)/obj
objs = $(patsubst %.c,$(OBJ)/%.o,$(1))
$(OBJ)/%.o: %.c | $(GEN_H)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZFLAGS) -MMD -MP -c -o $@ $<
-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)
LINK = $(CLANG) $(FUZZFLAGS) -o $@ $(filter %.o,$^)

$(FB)/fuzz_frame: $(call objs,tests/fuzz/fuzz_frame.c $(FRAME_SRCS))
	$(LINK) -lprotobuf-c -lsodium -lcrypto

$(FB)/fuzz_cm_conn: $(call objs,tests/fuzz/fuzz_cm_conn.c $(CM_SRCS))
	$(LINK) -lev -lprotobuf-c -lsodium -lcrypto

$(FB)/fuzz_cm_store: $(call objs,tests/fuzz/fuzz_cm_store.c $(CM_SRCS))
	$(LINK) -lev -lprotobuf-c -lsodium -lcrypto

$(FB)/fuzz_cs_conn: $(call objs,tests/fuzz/fuzz_cs_conn.c $(CS_SRCS))
	$(LINK) -lev -lprotobuf-c -lsodium -lcrypto -lzstd

$(FB)/fuzz_disp_conn: $(call objs,tests/fuzz/fuzz_disp_conn.c $(DISP_SRCS))
	$(LINK) -lev -lprotobuf-c -lsodium -lcrypto -lm

# MPIV_FUZZ_WRITE_SEEDS=tests/fuzz/seeds/fuzz_tp_read $(FB)/fuzz_tp_read
# writes its seeds again (valid frames of every type a rank receives).
$(FB)/fuzz_tp_read: $(call objs,tests/fuzz/fuzz_tp_read.c $(LIB_SRCS))
	$(LINK) -lprotobuf-c -lsodium -lcrypto -lm

# The rank's reader of its links to peer ranks (direct protocol), over
# loopback TCP; MPIV_FUZZ_WRITE_SEEDS=tests/fuzz/seeds/fuzz_dp_read
# $(FB)/fuzz_dp_read writes its seeds again.
$(FB)/fuzz_dp_read: $(call objs,tests/fuzz/fuzz_dp_read.c $(LIB_SRCS))
	$(LINK) -lprotobuf-c -lsodium -lcrypto -lm

# The node agent's privileged helper: its packet decoder.
PRIV_SRCS := node-agent/helper_io.c \
	runtime/frame.c runtime/seal.c $(GEN_C)
$(FB)/fuzz_priv: $(call objs,tests/fuzz/fuzz_priv.c $(PRIV_SRCS))
	$(LINK) -lev -lprotobuf-c -lsodium -lcrypto -lzstd

# What a checkpoint server decodes of an incremental image (and of a
# stored full one) when it rebuilds a chain; MPIV_FUZZ_WRITE_SEEDS=
# tests/fuzz/seeds/fuzz_cs_delta $(FB)/fuzz_cs_delta writes its seeds.
DELTA_SRCS := node-agent/criu_delta.c runtime/cksum.c runtime/log.c
$(FB)/fuzz_cs_delta: $(call objs,tests/fuzz/fuzz_cs_delta.c $(DELTA_SRCS))
	$(LINK) -lzstd

# mpiv sweep's reader of run reports (cli/jsonr.c): plain bytes in.
$(FB)/fuzz_jsonr: $(call objs,tests/fuzz/fuzz_jsonr.c cli/jsonr.c)
	$(LINK)

# The target side of one-sided communication: a batch of RMA records
# applied to a window (libmpi-lite/win_rma.c); MPIV_FUZZ_WRITE_SEEDS=
# tests/fuzz/seeds/fuzz_win_apply $(FB)/fuzz_win_apply writes its seeds.
$(FB)/fuzz_win_apply: $(call objs,tests/fuzz/fuzz_win_apply.c $(LIB_SRCS))
	$(LINK) -lprotobuf-c -lsodium -lcrypto -lm

# The record layer's reader (runtime/seal.c): arbitrary ciphertext in.
$(FB)/fuzz_seal: $(call objs,tests/fuzz/fuzz_seal.c runtime/seal.c)
	$(LINK) -lsodium -lcrypto

# Secret files in every format (runtime/auth_rotate.c): plain bytes in.
ROT_SRCS := runtime/auth_rotate.c runtime/auth_rotate_write.c runtime/auth.c runtime/auth_keys.c \
	runtime/frame.c runtime/seal.c $(GEN_C)
$(FB)/fuzz_secret_file: $(call objs,tests/fuzz/fuzz_secret_file.c $(ROT_SRCS))
	$(LINK) -lprotobuf-c -lsodium -lcrypto
