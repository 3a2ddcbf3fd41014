# Thin wrappers over CMake. The build tree is build/; lesson executables are copied to the root.
#
#   make lesson08          build lesson 08 and leave ./lesson08 here
#   make                   build everything
#   make test              configure, build, run every test (GPU tests skip without a GPU)
#   make bench             every lesson over the standard sweep -> docs/results/<model>.csv and
#                          .md, <model> the GPU's (h100, h200, ...)
#   make sweep             the READMEs' configuration tables -> profiles/sweeps/<group>.csv
#   make diff L=08         what lesson 08 adds: its kernel.cuh against its parent's (the
#                          parent its lesson.json names, usually lesson 07)
#   make diff L=08 CODE=1  the same, code only: no comment-only or blank lines, and the
#                          lessonNN namespaces count as equal
#   make resources         registers, shared memory and spills of every lesson kernel
#   make sanitize          compute-sanitizer (memcheck, racecheck, synccheck) on every lesson
#   make profile L=08      Nsight Compute report of lesson 08      (profiles/README.md)
#   make compare A=07 B=08 two lessons' profiles side by side      (profiles/README.md)
#   make timeline          lesson 17's MLP chain on a CUPTI timeline (profiles/README.md)
#   make roles             where a launch of lesson 16's kernel spends its time, role by role
#                          (profiles/README.md)
#   make pictures          every picture of the pages drawn again from its committed data file
#   make device            what the GPU reports, its measured bandwidth and ridge point

BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=
PYTHON ?= python3

# The lessons that are one GEMM kernel (kernel.cuh): the loops below run each on a shape.
LESSON_DIRS := $(sort $(patsubst %/kernel.cuh,%,$(wildcard lessons/[0-9][0-9]_*/kernel.cuh)))
LESSON_IDS := $(foreach dir,$(LESSON_DIRS),$(firstword $(subst _, ,$(notdir $(dir)))))
LESSON_TARGETS := $(addprefix lesson,$(LESSON_IDS))

.PHONY: all configure test bench sweep diff resources sanitize profile compare clean $(LESSON_TARGETS)

all: configure
	cmake --build $(BUILD) -j $(JOBS)
	@for id in $(LESSON_IDS); do cp -f $(BUILD)/lessons/lesson$$id ./lesson$$id; done

# nvcc: the one on PATH, else the toolkit's usual place. Without either, configure says in one line
# what to do instead of CMake's "No CMAKE_CUDA_COMPILER could be found".
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))

configure:
	@test -n "$(NVCC)" || { echo "make: nvcc not found: install the CUDA 13 toolkit, or put its bin folder on PATH (export PATH=/usr/local/cuda/bin:\$$PATH)" >&2; exit 2; }
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER=$(NVCC) $(CMAKE_ARGS) > /dev/null

$(LESSON_TARGETS): lesson%: configure
	cmake --build $(BUILD) -j $(JOBS) --target lesson$*
	@cp -f $(BUILD)/lessons/lesson$* ./lesson$*

# Lesson 19 is not one GEMM kernel but a layer over several GPUs (no kernel.cuh), built only where
# CMake finds NCCL and CUPTI, so the loops over the lessons above leave it out, and this rule
# builds it (a hand-out of an earlier lesson has no lesson 19).
.PHONY: lesson19
lesson19: configure
	@test -f lessons/19_tensor_parallel/main.cu || { echo "make: this copy of the course has no lesson 19" >&2; exit 2; }
	@if [ -f $(BUILD)/lessons/lesson19_skipped.txt ]; then printf 'make: ' >&2; cat $(BUILD)/lessons/lesson19_skipped.txt >&2; exit 2; fi
	cmake --build $(BUILD) -j $(JOBS) --target lesson19
	@cp -f $(BUILD)/lessons/lesson19 ./lesson19

# The GPU tests take the GPU one at a time (tests/CMakeLists.txt); the host tests run beside them.
test: configure
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

COMMIT = $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
# The CSV names the GPU: results_table.py --store files it and its page under that GPU's model.
bench: configure
	cmake --build $(BUILD) -j $(JOBS) --target gemm_bench
	$(BUILD)/profiles/gemm_bench --csv $(BUILD)/bench_results.csv --commit $(COMMIT)
	$(PYTHON) profiles/results_table.py $(BUILD)/bench_results.csv --store docs/results

# The configuration tables of the READMEs (tile shapes, stage counts): profiles/sweeps/<group>.csv.
# GROUPS=stages_08,tiles_11 runs only those; SHAPES=4096,8192x8192x1024 other shapes (S: S^3);
# QUICK=1 the oracle's shorter protocol (gemm_sweep --quick: the clock warmed once per shape).
sweep: configure
	cmake --build $(BUILD) -j $(JOBS) --target gemm_sweep
	$(BUILD)/profiles/gemm_sweep --out-dir profiles/sweeps --commit $(COMMIT) $(if $(GROUPS),--groups $(GROUPS)) $(if $(SHAPES),--shapes $(SHAPES)) $(if $(filter-out 0,$(QUICK)),--quick)

# profiles/diff.py reads the parent from the lesson's lesson.json; CODE=1 (not 0): code only.
diff:
	@$(PYTHON) profiles/diff.py "$(L)" $(if $(filter-out 0,$(CODE)),--code)

resources: configure
	@cmake -S . -B $(BUILD)/resources -DCMAKE_BUILD_TYPE=Release -DGEMM_PTXAS_VERBOSE=ON -DCMAKE_CUDA_COMPILER=$(NVCC) $(CMAKE_ARGS) > /dev/null
	@cmake --build $(BUILD)/resources -j $(JOBS) --target gemm_common > /dev/null 2>&1
	@for id in $(LESSON_IDS); do \
	   find $(BUILD)/resources/lessons -path "*lesson$$id.dir*" -name '*.o' -delete; \
	   cmake --build $(BUILD)/resources --target lesson$$id > $(BUILD)/resources/ptxas_lesson$$id.log 2>&1 \
	     || { cat $(BUILD)/resources/ptxas_lesson$$id.log; exit 1; }; \
	 done
	@find $(BUILD)/resources -name 'resource_study.cu.o' -delete
	@cmake --build $(BUILD)/resources --target resource_study > $(BUILD)/resources/ptxas_study.log 2>&1 \
	  || { cat $(BUILD)/resources/ptxas_study.log; exit 1; }
	@$(PYTHON) profiles/resources.py $(addprefix $(BUILD)/resources/ptxas_lesson,$(addsuffix .log,$(LESSON_IDS)))
	@echo
	@echo "Lessons 05 and 06 at other tile shapes (block, warp, stages):"
	@NVCC=$(NVCC) $(PYTHON) profiles/resources.py $(BUILD)/resources/ptxas_study.log --csv profiles/sweeps/ptxas_05_06.csv --commit $(COMMIT)

# Small and ragged in M, N and K (K = 4 * 64 + 16), and within every lesson's contract: lesson 18
# asks K % 16 == 0.
SANITIZE_SHAPE ?= --m 200 --n 136 --k 272
sanitize: all
	@for id in $(LESSON_IDS); do for tool in memcheck racecheck synccheck; do \
	   echo "== lesson$$id $$tool"; \
	   compute-sanitizer --tool $$tool --error-exitcode 1 ./lesson$$id $(SANITIZE_SHAPE) --profile \
	     || exit 1; \
	 done; done

# Nsight Compute (profiles/README.md). profile: the report and raw CSV of one lesson kernel, at
# 4096^3 unless M=, N=, K= say otherwise; CURATED=1 collects only the curated metrics, enough for a
# reference (profiles/make_reference.py) in fewer replay passes. compare: two or three
# lessons side by side, from the local profiles or the committed references of one GPU model
# (GPU=h100 picks it; else the GPU here, or without one the newest folder that has them all).
profile:
	@test -n "$(L)" || { echo "usage: make profile L=NN [M=4096] [N=4096] [K=4096] [CURATED=1]"; exit 2; }
	@ls -d lessons/$(L)_* > /dev/null 2>&1 || { echo "make profile: no lesson $(L) under lessons/"; exit 2; }
	$(MAKE) lesson$(L)
	$(PYTHON) profiles/profile.py $(L) --build $(BUILD) $(if $(M),--m $(M)) $(if $(N),--n $(N)) $(if $(K),--k $(K)) $(if $(filter-out 0,$(CURATED)),--curated-only)

compare:
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make compare A=NN B=MM [C=KK] [GPU=h100]"; exit 2; }
	@$(PYTHON) profiles/compare.py $(A) $(B) $(C) $(if $(GPU),--gpu $(GPU))

# The pictures the pages show, each drawn from a committed data file (profiles/pictures.py, the
# list of them; no GPU and no build needed).
.PHONY: pictures
pictures:
	@$(PYTHON) profiles/pictures.py

# The shell lines that set $$gpu to GPU 0's name (nvidia-smi's) and $$model to its folder name (h100,
# h200, ...: profiles/compare.py --model-of), for the files a target writes; one line and exit 1
# where nvidia-smi names no GPU.
GPU0_MODEL = gpu="$$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2> /dev/null)"; \
	test -n "$$gpu" || { echo "make $@: nvidia-smi names no GPU" >&2; exit 1; }; \
	model="$$($(PYTHON) profiles/compare.py --model-of "$$gpu")" || exit 1

# Lesson 17's MLP chain on a timeline (profiles/chain_timeline.cu, CUPTI): each kernel's start and
# end, into profiles/sweeps/timeline_17_<model>.txt. The tool does not print the GPU's name, so the
# model comes from nvidia-smi's GPU 0 (the tool runs on CUDA's device 0: the same GPU where the
# machine has one GPU, or GPUs of one model), and the first line of the file names the GPU, the
# date and the commit. TOKENS=128,512 (the default) picks the token counts.
.PHONY: timeline
timeline: configure
	cmake --build $(BUILD) -j $(JOBS) --target chain_timeline
	@$(GPU0_MODEL); \
	 out=profiles/sweeps/timeline_17_$$model.txt; \
	 { echo "# lesson 17's MLP chain: chain_timeline$(if $(TOKENS), --tokens $(TOKENS)) on $$gpu, $$(date -u +%F), commit $(COMMIT)"; \
	   $(BUILD)/profiles/chain_timeline $(if $(TOKENS),--tokens $(TOKENS)); } > $$out.part \
	   && mv $$out.part $$out && echo "wrote $$out" || { rm -f $$out.part; exit 1; }

# Where a launch of lesson 16's kernel spends its time, role by role (profiles/role_timeline.cu):
# SHAPES (default 1024^3) and CONFIGS (default the model's pick, `model`; or configuration names,
# comma-separated) choose what is traced, L2 (flush, the default; keep; operands) what L2 holds when
# a traced launch starts; the rows go to profiles/sweeps/roles_16_<model>.csv (with L2 given,
# roles_16_<model>_l2_<L2>.csv), the model from nvidia-smi's GPU 0 as for `make timeline`.
.PHONY: roles
roles: configure
	cmake --build $(BUILD) -j $(JOBS) --target role_timeline
	@$(GPU0_MODEL); \
	 $(BUILD)/profiles/role_timeline $(if $(SHAPES),--shapes $(SHAPES)) $(if $(CONFIGS),--configs $(CONFIGS)) $(if $(L2),--l2 $(L2)) \
	   --csv profiles/sweeps/roles_16_$$model$(if $(L2),_l2_$(L2)).csv --commit $(COMMIT)

clean:
	rm -rf $(BUILD) $(LESSON_TARGETS) lesson19

# Homework and grading (docs/grading.md):
#   make homework L=08                       the hand-out of lesson 08: dist/homework08/ and .tar.gz
#                                            (from a git checkout of the course)
#   make grade L=08 SUBMISSION=path [QUICK=1] grade a kernel.cuh (or a folder or archive holding
#                                             one); GRADE_SECRET in the environment adds the hidden
#                                             shapes and performance. Report: build-grading/results/
#                                             Exit status: 0 graded, 2 usage (or, in a hand-out, a
#                                             CUDA tool missing), 3 infrastructure error.
# BEGIN COURSE ONLY
.PHONY: homework
homework:
	@test -n "$(L)" || { echo "usage: make homework L=NN" >&2; exit 2; }
	@$(PYTHON) tests/grading/homework.py $(L)
# END COURSE ONLY

.PHONY: grade
grade:
	@test -n "$(L)" -a -n "$(SUBMISSION)" || { echo "usage: make grade L=NN SUBMISSION=path/to/kernel.cuh [QUICK=1] [GRADE_JOBS=N]" >&2; exit 2; }
	@$(PYTHON) tests/grading/grade.py $(L) "$(SUBMISSION)" $(if $(filter-out 0,$(QUICK)),--quick) $(if $(GRADE_JOBS),--jobs $(GRADE_JOBS))

# make device: what the GPU reports about itself (SMs, L2, memory bus and clocks), its measured
# copy and read bandwidth, and the peak and ridge point they give, as a Markdown table
# (profiles/device_report.cu; $(BUILD)/profiles/device_report --json for scripts). Then nvidia-smi's
# driver version, power limit and clocks, which the CUDA runtime does not report.
.PHONY: device
device: configure
	cmake --build $(BUILD) -j $(JOBS) --target device_report
	$(BUILD)/profiles/device_report --commit $(COMMIT)
	@if command -v nvidia-smi > /dev/null; then \
	   nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,clocks.max.memory --format=csv; \
	 else echo "nvidia-smi not found: no driver version or power limit"; fi
