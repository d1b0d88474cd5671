// SPDX-License-Identifier: GPL-2.0
/*
 * Valor's instrumentation for clang: an LLVM pass plugin, loaded with
 * -fpass-plugin= (valor cc --compiler=clang does).  C++ only because
 * LLVM's API is.  Documentation/instrumentation-pass.md explains the
 * design; in short, at the end of the optimizer (so that it sees
 * optimized, vectorized code), for every function the front end marked
 * sanitize_thread, it:
 *
 *  - drops checks that a dominating check of the same address already
 *    made, with nothing that may synchronize on any path between them
 *    (the Valor paper's section 5.1);
 *  - checks the accesses of a loop that walk one block of memory once,
 *    before the loop, as a range, when nothing in the loop may
 *    synchronize and it runs to its computed count;
 *  - inserts a check before every other load and store of memory that
 *    may be shared (not locals or fresh heap blocks that never escape,
 *    not constants), and
 *    inlines it: the runtime's own fast path, compiled to bitcode from
 *    libvalor/instrument/check.c and embedded here
 *    (libvalor/runtime/pass_abi.h is the contract);
 *  - turns atomics, fences, vtable pointer accesses and odd-sized
 *    accesses into the ThreadSanitizer ABI calls the runtime implements,
 *    and memcpy/memmove/memset into checks of their pieces (a few
 *    bytes) or calls to the C library's, which the runtime intercepts.
 *
 * It inserts no function entry or exit hooks.  In a module that may
 * become part of a shared library (PIC, not PIE) the checks stay calls
 * to the runtime's exported __tsan_* entry points: the inlined check
 * refers to the executable's hidden runtime symbols.
 */
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Analysis/CaptureTracking.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/MemoryBuiltins.h"
#include "llvm/Analysis/PostDominators.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"

#include "pass_abi_version.h"

using namespace llvm;

/* What the pass calls: pass_abi.h, and the ThreadSanitizer ABI. */
namespace names
{
/* [is_write][log2 of the size] */
const char *const Check[2][5] = {
	{ "__valor_check_read1", "__valor_check_read2", "__valor_check_read4",
	  "__valor_check_read8", "__valor_check_read16" },
	{ "__valor_check_write1", "__valor_check_write2",
	  "__valor_check_write4", "__valor_check_write8",
	  "__valor_check_write16" },
};
const char *const TsanAccess[2][5] = {
	{ "__tsan_read1", "__tsan_read2", "__tsan_read4", "__tsan_read8",
	  "__tsan_read16" },
	{ "__tsan_write1", "__tsan_write2", "__tsan_write4", "__tsan_write8",
	  "__tsan_write16" },
};
const char ReadRange[] = "__tsan_read_range";
const char CheckReadSpan[] = "__valor_check_read_span";
const char CheckWriteSpan[] = "__valor_check_write_span";
const char PassReadRange[] = "__valor_pass_read_range";
const char PassWriteRange[] = "__valor_pass_write_range";
const char PassReadNest[] = "__valor_pass_read_nest";
const char PassWriteNest[] = "__valor_pass_write_nest";
const char WriteRange[] = "__tsan_write_range";
const char VptrRead[] = "__tsan_vptr_read";
const char VptrUpdate[] = "__tsan_vptr_update";
/* The C library's: the runtime intercepts them. */
const char Memcpy[] = "memcpy";
const char Memmove[] = "memmove";
const char Memset[] = "memset";
const char ThreadFence[] = "__tsan_atomic_thread_fence";
const char SignalFence[] = "__tsan_atomic_signal_fence";
const char AbiSymbol[] = VALOR_PASS_ABI_SYMBOL_NAME;
/* [is_write]: the cell word and the memory of an access, prefetched. */
const char *const Prefetch[2] = { "__valor_prefetch_read",
				  "__valor_prefetch_write" };
/* The calls that take a lock: the critical section starts after them. */
const char *const Acquires[] = {
	"pthread_mutex_lock",
	"pthread_mutex_timedlock",
	"pthread_mutex_clocklock",
	"pthread_rwlock_rdlock",
	"pthread_rwlock_wrlock",
	"pthread_rwlock_timedrdlock",
	"pthread_rwlock_timedwrlock",
	"pthread_spin_lock",
	"sem_wait",
	"sem_timedwait",
};
} /* namespace names */

/*
 * Each step can be turned off (-mllvm -valor-...=0), to measure what it
 * is worth and to test that the others do not depend on it.
 */
static cl::opt<bool> ClInline("valor-inline-checks",
			      cl::desc("inline the runtime's access check "
				       "(else call it)"),
			      cl::init(true), cl::Hidden);
static cl::opt<bool> ClElide("valor-elide-redundant",
			     cl::desc("drop checks a dominating check of the "
				      "same address makes redundant"),
			     cl::init(true), cl::Hidden);
static cl::opt<bool> ClCoalesce("valor-coalesce-loops",
				cl::desc("check a loop's contiguous accesses "
					 "once, as ranges, before the loop"),
				cl::init(true), cl::Hidden);
static cl::opt<bool> ClCoalesceWrites("valor-coalesce-writes",
				      cl::desc("coalesce a loop's writes too"),
				      cl::init(true), cl::Hidden);
static cl::opt<bool> ClCoalesceStrided(
	"valor-coalesce-strided",
	cl::desc("check a loop's reads of every so many 8-byte "
		 "elements before the loop too"),
	cl::init(true), cl::Hidden);
static cl::opt<bool> ClCoalesceGapped(
	"valor-coalesce-gapped",
	cl::desc("check a nest of stretches with gaps between them (a "
		 "tile's rows) before its outer loops too"),
	cl::init(true), cl::Hidden);
static cl::opt<bool> ClMergeReads(
	"valor-merge-reads",
	cl::desc("check neighbouring reads of one base (a struct's "
		 "fields) once, as one span"),
	cl::init(true), cl::Hidden);
static cl::opt<bool> ClMergeWrites(
	"valor-merge-writes",
	cl::desc("check neighbouring writes of one base, whole cells, once, "
		 "as one span"),
	cl::init(true), cl::Hidden);
static cl::opt<bool> ClPrefetch(
	"valor-prefetch-at-locks",
	cl::desc("Fetch the first accesses of a critical section, and their "
		 "cell words, before the lock call"),
	cl::init(true), cl::Hidden);
static cl::opt<bool> ClStats("valor-stats",
			     cl::desc("print what the pass did per module"),
			     cl::init(false), cl::Hidden);

/* The check bitcode, embedded by check_blob.S. */
extern "C" const char valor_check_bc[];
extern "C" const char valor_check_bc_end[];

namespace
{

/* One load or store the pass may check. */
struct Access {
	Instruction *Inst;
	Value *Ptr;
	uint64_t Size; /* bytes */
	bool IsWrite;
	/* Whose source line the check names: Inst's unless set. */
	Instruction *Site = nullptr;
	/* Accesses of Size bytes from Ptr that mergeNeighbours() joined. */
	bool Span = false;
};

struct Stats {
	unsigned Checked = 0, Elided = 0, Ranges = 0, Vptrs = 0;
	unsigned Coalesced = 0, LoopRanges = 0, WritesAtReads = 0;
	unsigned Atomics = 0, MemOps = 0, Locals = 0, NoSync = 0;
	unsigned Merged = 0, Spans = 0;
	unsigned MergedWrites = 0, WriteSpans = 0;
	unsigned Prefetches = 0;
};

/* Memory orders of the tsan ABI (C11's, in its order). */
enum TsanOrder {
	ORDER_RELAXED = 0,
	ORDER_ACQUIRE = 2,
	ORDER_RELEASE = 3,
	ORDER_ACQ_REL = 4,
	ORDER_SEQ_CST = 5
};

int tsanOrder(AtomicOrdering O)
{
	switch (O) {
	case AtomicOrdering::Acquire:
		return ORDER_ACQUIRE;
	case AtomicOrdering::Release:
		return ORDER_RELEASE;
	case AtomicOrdering::AcquireRelease:
		return ORDER_ACQ_REL;
	case AtomicOrdering::SequentiallyConsistent:
		return ORDER_SEQ_CST;
	default:
		return ORDER_RELAXED;
	}
}

/* A compare-and-swap's order on failure may not release. */
int failureOrder(int Mo)
{
	if (Mo == ORDER_RELEASE)
		return ORDER_RELAXED;
	if (Mo == ORDER_ACQ_REL)
		return ORDER_ACQUIRE;
	return Mo;
}

/* log2 of the sizes the ABI has functions for, or -1. */
/* The largest constant memcpy/memset kept inline, checked piece by piece. */
const uint64_t MaxInlineBlock = 64;

int sizeIndex(uint64_t Size)
{
	switch (Size) {
	case 1:
		return 0;
	case 2:
		return 1;
	case 4:
		return 2;
	case 8:
		return 3;
	case 16:
		return 4;
	default:
		return -1;
	}
}

class Instrumenter {
    public:
	Instrumenter(Module &M, FunctionAnalysisManager &FAM)
	    : M(M), C(M.getContext()), DL(M.getDataLayout()), FAM(FAM),
	      I8Ptr(Type::getInt8PtrTy(C)), I32(Type::getInt32Ty(C)),
	      IntPtr(DL.getIntPtrType(C))
	{
		/* A library's code cannot reach the executable's hidden state. */
		InlineChecks = ClInline &&
			       (M.getPICLevel() == PICLevel::NotPIC ||
				M.getPIELevel() != PIELevel::Default);
	}

	bool run();

    private:
	Module &M;
	LLVMContext &C;
	const DataLayout &DL;
	FunctionAnalysisManager &FAM;
	Type *I8Ptr, *I32, *IntPtr;
	bool InlineChecks;
	Stats St;
	DenseMap<const Value *, bool> LocalCache;
	SmallVector<CallInst *, 64> ToInline;

	bool instrumentFunction(Function &F);
	void markNoSync();
	bool isLocal(const Value *Obj);
	bool mayBeShared(Value *Ptr, bool IsWrite);
	bool elide(Function &F, SmallVectorImpl<Access> &Accesses);
	void checkWritesAtTheirReads(SmallVectorImpl<Access> &Accesses);
	void mergeNeighbours(Function &F, SmallVectorImpl<Access> &Accesses,
			     bool Writes);
	void coalesce(Function &F, SmallVectorImpl<Access> &Accesses);
	void keepLoopsOnly(Function &F);
	void insertCheck(const Access &A);
	void prefetchAtLocks(Function &F, ArrayRef<Access> Accesses);
	void lowerAtomic(Instruction *I);
	void lowerRMWByCAS(AtomicRMWInst *RMW, Value *Ptr, Type *Ty, int Mo);
	bool splitBlockOp(MemIntrinsic *MI, SmallVectorImpl<Access> &Accesses);
	void lowerBlockOp(MemIntrinsic *MI);
	bool linkAndInline();
	void markModule();
	FunctionCallee atomicFn(const char *Op, unsigned Bits, Type *Ret,
				ArrayRef<Type *> Args);
};

/*
 * Whether the memory of @Obj is the function's alone: a local, or a
 * block the C library's or C++'s allocator has just returned (malloc,
 * calloc, aligned_alloc, operator new, strdup; not realloc, whose block
 * may hold what others wrote), whose address is never captured.  Then
 * no other thread can learn the address while the block lives: no
 * access to it can race, and none needs a check.  A free of such a
 * block is still the runtime's (checked as a write, its history then
 * cleared), so the next owner of the memory starts afresh.  The
 * per-thread buffers of map-reduce code are this (Phoenix's
 * histogram: three checked increments a pixel).
 */
bool Instrumenter::isLocal(const Value *Obj)
{
	auto It = LocalCache.find(Obj);

	if (It != LocalCache.end())
		return It->second;
	bool Local = false;

	if (isa<AllocaInst>(Obj)) {
		Local = true;
	} else if (auto *CB = dyn_cast<CallBase>(Obj)) {
		/* The analysis manager takes a function it may change. */
		auto *F = const_cast<Function *>(CB->getFunction());

		Local = F &&
			isAllocLikeFn(
				CB, &FAM.getResult<TargetLibraryAnalysis>(*F));
	}
	Local = Local && !PointerMayBeCaptured(Obj, /*ReturnCaptures=*/true,
					       /*StoreCaptures=*/true);
	LocalCache[Obj] = Local;
	return Local;
}

bool Instrumenter::mayBeShared(Value *Ptr, bool IsWrite)
{
	if (Ptr->getType()->getPointerAddressSpace() != 0)
		return false;
	const Value *Obj = getUnderlyingObject(Ptr);

	if (isLocal(Obj)) {
		St.Locals++;
		return false;
	}
	if (auto *GV = dyn_cast<GlobalVariable>(Obj)) {
		if (!IsWrite && GV->isConstant())
			return false;
		/* Profiling counters are racy by design. */
		if (GV->getName().startswith("__llvm_gcov") ||
		    GV->getName().startswith("__llvm_prf"))
			return false;
	}
	return true;
}

/* A C++ object's vtable pointer: the runtime has its own rule for it. */
bool isVtableAccess(const Instruction *I)
{
	MDNode *Tbaa = I->getMetadata(LLVMContext::MD_tbaa);

	return Tbaa && Tbaa->isTBAAVtableAccess();
}

/*
 * C library math functions: they touch no memory but errno, which is
 * the thread's own, and call nothing of the program's.  clang marks
 * them as writing memory (errno), which would make every call to exp()
 * in a loop look like a possible lock.
 */
bool isMathLibCall(const CallBase *CB, const TargetLibraryInfo &TLI)
{
	const Function *Callee = CB->getCalledFunction();
	LibFunc F;

	if (!Callee || !TLI.getLibFunc(*Callee, F) || !TLI.has(F))
		return false;
	switch (F) {
	case LibFunc_exp:
	case LibFunc_expf:
	case LibFunc_expl:
	case LibFunc_exp2:
	case LibFunc_exp2f:
	case LibFunc_exp2l:
	case LibFunc_expm1:
	case LibFunc_expm1f:
	case LibFunc_expm1l:
	case LibFunc_log:
	case LibFunc_logf:
	case LibFunc_logl:
	case LibFunc_log2:
	case LibFunc_log2f:
	case LibFunc_log2l:
	case LibFunc_log10:
	case LibFunc_log10f:
	case LibFunc_log10l:
	case LibFunc_log1p:
	case LibFunc_log1pf:
	case LibFunc_log1pl:
	case LibFunc_sqrt:
	case LibFunc_sqrtf:
	case LibFunc_sqrtl:
	case LibFunc_cbrt:
	case LibFunc_cbrtf:
	case LibFunc_cbrtl:
	case LibFunc_pow:
	case LibFunc_powf:
	case LibFunc_powl:
	case LibFunc_sin:
	case LibFunc_sinf:
	case LibFunc_sinl:
	case LibFunc_cos:
	case LibFunc_cosf:
	case LibFunc_cosl:
	case LibFunc_tan:
	case LibFunc_tanf:
	case LibFunc_tanl:
	case LibFunc_asin:
	case LibFunc_asinf:
	case LibFunc_asinl:
	case LibFunc_acos:
	case LibFunc_acosf:
	case LibFunc_acosl:
	case LibFunc_atan:
	case LibFunc_atanf:
	case LibFunc_atanl:
	case LibFunc_atan2:
	case LibFunc_atan2f:
	case LibFunc_atan2l:
	case LibFunc_sinh:
	case LibFunc_sinhf:
	case LibFunc_sinhl:
	case LibFunc_cosh:
	case LibFunc_coshf:
	case LibFunc_coshl:
	case LibFunc_tanh:
	case LibFunc_tanhf:
	case LibFunc_tanhl:
	case LibFunc_fmod:
	case LibFunc_fmodf:
	case LibFunc_fmodl:
	case LibFunc_ldexp:
	case LibFunc_ldexpf:
	case LibFunc_ldexpl:
	case LibFunc_floor:
	case LibFunc_floorf:
	case LibFunc_floorl:
	case LibFunc_ceil:
	case LibFunc_ceilf:
	case LibFunc_ceill:
	case LibFunc_round:
	case LibFunc_roundf:
	case LibFunc_roundl:
	case LibFunc_trunc:
	case LibFunc_truncf:
	case LibFunc_truncl:
	case LibFunc_rint:
	case LibFunc_rintf:
	case LibFunc_rintl:
	case LibFunc_fabs:
	case LibFunc_fabsf:
	case LibFunc_fabsl:
	case LibFunc_fmin:
	case LibFunc_fminf:
	case LibFunc_fminl:
	case LibFunc_fmax:
	case LibFunc_fmaxf:
	case LibFunc_fmaxl:
		return true;
	default:
		return false;
	}
}

/*
 * Whether @I may synchronize: every atomic and fence, and every call
 * but those known to touch no memory other threads could use for it.
 */
bool maySync(const Instruction &I, const TargetLibraryInfo &TLI)
{
	if (I.isAtomic() || isa<FenceInst>(I))
		return true;
	auto *CB = dyn_cast<CallBase>(&I);
	if (!CB)
		return false;
	if (CB->isInlineAsm())
		return true;
	if (isa<DbgInfoIntrinsic>(CB) || isa<MemIntrinsic>(CB))
		return false;
	if (auto *II = dyn_cast<IntrinsicInst>(CB)) {
		switch (II->getIntrinsicID()) {
		case Intrinsic::lifetime_start:
		case Intrinsic::lifetime_end:
		case Intrinsic::assume:
		case Intrinsic::expect:
		case Intrinsic::prefetch:
			return false;
		default:
			break;
		}
	}
	return !(CB->onlyReadsMemory() || CB->hasFnAttr(Attribute::NoSync) ||
		 isMathLibCall(CB, TLI));
}

/*
 * Whether some path from the end of @From to the start of @To that does
 * not enter @From again crosses a block with @Sync set.  Such a path may
 * synchronize between a check at the end of @From and an access at the
 * start of @To.  A path that enters @From again runs its check again,
 * so only the last stretch of a path counts; it may run through @To
 * whole (a loop around @To), since the access in @To renews nothing.
 */
bool syncBetween(BasicBlock *From, BasicBlock *To,
		 const DenseMap<BasicBlock *, bool> &Sync)
{
	/* Blocks with a path to @To that does not enter @From. */
	SmallPtrSet<BasicBlock *, 32> ReachTo;
	SmallVector<BasicBlock *, 32> Work;
	const unsigned Limit = 4096;

	for (BasicBlock *P : predecessors(To))
		Work.push_back(P);
	while (!Work.empty()) {
		BasicBlock *B = Work.pop_back_val();

		if (B == From || !ReachTo.insert(B).second)
			continue;
		if (ReachTo.size() > Limit)
			return true; /* too big to tell: assume the worst */
		for (BasicBlock *P : predecessors(B))
			Work.push_back(P);
	}
	/* Of those, the ones @From reaches without entering itself again. */
	SmallPtrSet<BasicBlock *, 32> Seen;
	for (BasicBlock *S : successors(From))
		Work.push_back(S);
	while (!Work.empty()) {
		BasicBlock *B = Work.pop_back_val();

		if (B == From || !ReachTo.count(B) || !Seen.insert(B).second)
			continue;
		if (Sync.lookup(B))
			return true;
		for (BasicBlock *S : successors(B))
			Work.push_back(S);
	}
	return false;
}

/* Whether an instruction strictly between @A and @B (one block) may sync. */
bool syncInBlockBetween(const Instruction *A, const Instruction *B,
			const TargetLibraryInfo &TLI)
{
	for (auto It = std::next(A->getIterator()); &*It != B; ++It)
		if (maySync(*It, TLI))
			return true;
	return false;
}

bool syncAfter(const Instruction *A, const TargetLibraryInfo &TLI)
{
	for (auto It = std::next(A->getIterator()); It != A->getParent()->end();
	     ++It)
		if (maySync(*It, TLI))
			return true;
	return false;
}

bool syncBefore(const Instruction *B, const TargetLibraryInfo &TLI)
{
	for (auto It = B->getParent()->begin(); &*It != B; ++It)
		if (maySync(*It, TLI))
			return true;
	return false;
}

/*
 * @F's blocks numbered in a depth-first walk of the dominator tree: a
 * block's number is above those of all its dominators.
 */
DenseMap<BasicBlock *, unsigned> dominatorOrder(const DominatorTree &DT)
{
	DenseMap<BasicBlock *, unsigned> Order;
	unsigned N = 0;

	for (auto *Node : depth_first(DT.getRootNode()))
		Order[Node->getBlock()] = N++;
	return Order;
}

/* Drop the accesses whose @Marked entry is set. */
void dropMarked(SmallVectorImpl<Access> &Accesses, ArrayRef<bool> Marked)
{
	SmallVector<Access, 64> Kept;

	for (unsigned I = 0; I < Accesses.size(); I++)
		if (!Marked[I])
			Kept.push_back(Accesses[I]);
	Accesses.assign(Kept.begin(), Kept.end());
}

/*
 * A read of bytes that the same block then writes (x++, a[i] += v, a
 * swap's second half), with nothing in between that may synchronize or
 * not return: one write check, before the read, stands for both.  It
 * runs in the same region as both accesses and the write follows it
 * whenever it runs, so a conflict it finds is one the write has; and a
 * region that owns bytes has nothing to log for a read of them, so the
 * read's check could only find what the write's does.  The check names
 * the write's line.
 */
void Instrumenter::checkWritesAtTheirReads(SmallVectorImpl<Access> &Accesses)
{
	DenseMap<Instruction *, SmallVector<unsigned, 2> > Index;
	SmallVector<bool, 64> Drop(Accesses.size(), false);

	/*
	 * A small block copy kept inline (splitBlockOp()) is accesses of
	 * its own, one or more per side: a struct swap's reads and writes
	 * are three copies through a temporary.
	 */
	auto Plain = [](Instruction *I) {
		if (auto *LI = dyn_cast<LoadInst>(I))
			return !LI->isVolatile() && !isVtableAccess(LI);
		if (auto *SI = dyn_cast<StoreInst>(I))
			return !SI->isVolatile() && !isVtableAccess(SI);
		if (auto *MI = dyn_cast<MemIntrinsic>(I))
			return !MI->isVolatile();
		return false;
	};

	for (unsigned I = 0; I < Accesses.size(); I++)
		Index[Accesses[I].Inst].push_back(I);
	for (unsigned I = 0; I < Accesses.size(); I++) {
		Access &R = Accesses[I];

		if (R.IsWrite || !R.Size || !Plain(R.Inst))
			continue;
		Value *Key = R.Ptr->stripPointerCasts();
		bool Done = false;
		for (auto It = std::next(R.Inst->getIterator());
		     !Done && It != R.Inst->getParent()->end(); ++It) {
			auto W = Index.find(&*It);

			/* Calls end the look, but for copies kept inline. */
			if (auto *CB = dyn_cast<CallBase>(&*It))
				if (!isa<DbgInfoIntrinsic>(CB) &&
				    (!isa<MemIntrinsic>(CB) ||
				     W == Index.end()))
					break;
			if (It->isAtomic() || isa<FenceInst>(*It))
				break;
			if (W == Index.end() || !Plain(&*It))
				continue;
			for (unsigned J : W->second) {
				Access &A = Accesses[J];

				if (!A.IsWrite ||
				    A.Ptr->stripPointerCasts() != Key ||
				    A.Size < R.Size || Drop[J])
					continue;
				R.IsWrite = true;
				R.Size = A.Size;
				R.Site = A.Inst;
				Drop[J] = true;
				St.WritesAtReads++;
				Done = true;
				break;
			}
		}
	}
	dropMarked(Accesses, Drop);
}

/*
 * Drop the accesses whose check an earlier one makes: same address, at
 * least as many bytes, a write for a write (a write check covers a later
 * read too), dominating, and nothing that may synchronize between them
 * on any path.  Then both run in the same region of the thread, where
 * the first check has already recorded all the runtime needs: a second
 * could only find what the first did.
 */
bool Instrumenter::elide(Function &F, SmallVectorImpl<Access> &Accesses)
{
	DominatorTree &DT = FAM.getResult<DominatorTreeAnalysis>(F);
	const TargetLibraryInfo &TLI = FAM.getResult<TargetLibraryAnalysis>(F);
	DenseMap<BasicBlock *, bool> Sync;
	DenseMap<Value *, SmallVector<unsigned, 4> > ByPtr;
	SmallVector<Access, 64> Kept;

	for (BasicBlock &BB : F) {
		bool S = false;

		for (Instruction &I : BB)
			if (maySync(I, TLI)) {
				S = true;
				break;
			}
		Sync[&BB] = S;
	}
	/* Dominators first: a dominated access is never before its dominator. */
	DenseMap<BasicBlock *, unsigned> Order = dominatorOrder(DT);
	std::stable_sort(Accesses.begin(), Accesses.end(),
			 [&](const Access &X, const Access &Y) {
				 return Order.lookup(X.Inst->getParent()) <
					Order.lookup(Y.Inst->getParent());
			 });

	for (const Access &B : Accesses) {
		Value *Key = B.Ptr->stripPointerCasts();
		bool Covered = false;

		for (unsigned Idx : ByPtr[Key]) {
			const Access &A = Kept[Idx];

			if (A.Size < B.Size || (B.IsWrite && !A.IsWrite))
				continue;
			if (A.Inst == B.Inst) /* pieces of one block op */
				continue;
			if (!DT.dominates(A.Inst, B.Inst))
				continue;
			if (A.Inst->getParent() == B.Inst->getParent()) {
				if (syncInBlockBetween(A.Inst, B.Inst, TLI))
					continue;
			} else if (syncAfter(A.Inst, TLI) ||
				   syncBefore(B.Inst, TLI) ||
				   syncBetween(A.Inst->getParent(),
					       B.Inst->getParent(), Sync)) {
				continue;
			}
			Covered = true;
			break;
		}
		if (Covered) {
			St.Elided++;
			continue;
		}
		/* A vtable store of the pointer already there is no write. */
		if (!isVtableAccess(B.Inst))
			ByPtr[Key].push_back(Kept.size());
		Kept.push_back(B);
	}
	bool Changed = Kept.size() != Accesses.size();
	Accesses.assign(Kept.begin(), Kept.end());
	return Changed;
}

/*
 * The widest span of neighbouring reads checked as one: what the span's
 * look takes in, eight cells from the first one's start.  57 bytes fit
 * whatever the span's first byte in its cell; 64 need it aligned.
 */
const uint64_t MaxSpan = 64, MaxSpanUnaligned = 57;

/*
 * Whether @I neither may synchronize nor may keep the code after it
 * from running (a call that may not return, a volatile access).
 */
bool passesThrough(const Instruction &I, const TargetLibraryInfo &TLI)
{
	return !maySync(I, TLI) &&
	       isGuaranteedToTransferExecutionToSuccessor(&I);
}

/* Whether every instruction in [@It, @End) passesThrough(). */
bool allPassThrough(BasicBlock::const_iterator It,
		    BasicBlock::const_iterator End,
		    const TargetLibraryInfo &TLI)
{
	for (; It != End; ++It)
		if (!passesThrough(*It, TLI))
			return false;
	return true;
}

/*
 * Whether, once @A runs, @B runs too, later, in the same region, with
 * every value @A's operands had: @A dominates @B; every path from @A
 * reaches @B (@B's block post-dominates @A's); nothing on the way may
 * synchronize or stop it; and no path from @A to @B goes around a loop,
 * so that a value defined in a loop is the one @A saw.  The blocks
 * strictly between are all of the innermost loop of both, none of them
 * its header, so none is on a cycle.
 */
bool alwaysFollows(Instruction *A, Instruction *B, const DominatorTree &DT,
		   const PostDominatorTree &PDT, const LoopInfo &LI,
		   const TargetLibraryInfo &TLI)
{
	BasicBlock *From = A->getParent(), *To = B->getParent();
	const unsigned Limit = 64;

	if (From == To)
		return A->comesBefore(B) &&
		       allPassThrough(std::next(A->getIterator()),
				      B->getIterator(), TLI);
	Loop *L = LI.getLoopFor(From);
	if (LI.getLoopFor(To) != L || !DT.dominates(A, B) ||
	    !PDT.dominates(To, From) || (L && L->getHeader() == To))
		return false;
	if (!allPassThrough(std::next(A->getIterator()), From->end(), TLI) ||
	    !allPassThrough(To->begin(), B->getIterator(), TLI))
		return false;
	SmallPtrSet<BasicBlock *, 16> Seen;
	SmallVector<BasicBlock *, 16> Work(succ_begin(From), succ_end(From));
	while (!Work.empty()) {
		BasicBlock *X = Work.pop_back_val();

		if (X == To || !Seen.insert(X).second)
			continue;
		if (X == From || Seen.size() > Limit || LI.getLoopFor(X) != L ||
		    (L && L->getHeader() == X))
			return false;
		if (!allPassThrough(X->begin(), X->end(), TLI))
			return false;
		for (BasicBlock *S : successors(X))
			Work.push_back(S);
	}
	return true;
}

/*
 * Reads (or, with @Writes, writes) of one base at constant offsets (a
 * struct's fields, a point's three coordinates) whose bytes join into
 * one span of at most MaxSpan bytes, and which all run whenever the
 * first of them does (alwaysFollows()): one check of the span, before
 * the first, stands for all.  Reads are validated at the region's end,
 * so a read logged a little before it happens, in the same region, is
 * logged as it would have been; a write that is sure to follow in the
 * same region may take its bytes a little early, as a write checked at
 * its read does.  Every byte of the span is one an access of the group
 * touches: a gap between fields is never checked, so another thread's
 * accesses there stay its own.  The check names the first access's
 * line.  Inline, a read span costs one look at the read filter (a tag
 * and a word of mask bytes) where each read cost one; a write span,
 * whole 8-byte-aligned cells only, one test of all their cell words.
 */
void Instrumenter::mergeNeighbours(Function &F,
				   SmallVectorImpl<Access> &Accesses,
				   bool Writes)
{
	struct Piece {
		unsigned Idx;
		int64_t Off; /* from the group's first access */
	};
	struct Group {
		const SCEV *Ptr; /* of its first access */
		Loop *L;
		SmallVector<Piece, 4> P;
	};
	SmallVector<unsigned, 64> Cands;

	for (unsigned I = 0; I < Accesses.size(); I++) {
		const Access &A = Accesses[I];
		/* A write checked at its read (x++) is at the load. */
		Instruction *I0 = A.Inst;
		bool Plain = isa<LoadInst>(I0) || isa<StoreInst>(I0);

		if (A.IsWrite == Writes && !A.Span && A.Size &&
		    A.Size <= MaxSpan && Plain &&
		    (Writes || isa<LoadInst>(I0)) &&
		    !cast<Instruction>(I0)->isVolatile() &&
		    !isVtableAccess(I0) && getLoadStoreAddressSpace(I0) == 0)
			Cands.push_back(I);
	}
	if (Cands.size() < 2)
		return;
	ScalarEvolution &SE = FAM.getResult<ScalarEvolutionAnalysis>(F);
	DominatorTree &DT = FAM.getResult<DominatorTreeAnalysis>(F);
	PostDominatorTree &PDT = FAM.getResult<PostDominatorTreeAnalysis>(F);
	LoopInfo &LoopI = FAM.getResult<LoopAnalysis>(F);
	const TargetLibraryInfo &TLI = FAM.getResult<TargetLibraryAnalysis>(F);
	SmallVector<bool, 64> Drop(Accesses.size(), false);

	/* Leaders first: an access before the accesses that follow it. */
	DenseMap<BasicBlock *, unsigned> Order = dominatorOrder(DT);
	std::stable_sort(Cands.begin(), Cands.end(),
			 [&](unsigned X, unsigned Y) {
				 Instruction *I = Accesses[X].Inst,
					     *J = Accesses[Y].Inst;

				 if (I->getParent() != J->getParent())
					 return Order.lookup(I->getParent()) <
						Order.lookup(J->getParent());
				 return I != J && I->comesBefore(J);
			 });
	/*
	 * An access joins the group of an earlier one of its loop a constant
	 * distance away (ScalarEvolution's difference of the two addresses:
	 * a struct's fields through one index, whatever the index is).  The
	 * look goes back a few groups only, to bound the pass's time.
	 */
	const unsigned LookBack = 16;
	SmallVector<Group, 16> Groups;
	for (unsigned I : Cands) {
		const SCEV *S = SE.getSCEV(Accesses[I].Ptr);
		Loop *L = LoopI.getLoopFor(Accesses[I].Inst->getParent());
		bool Joined = false;

		for (unsigned K = Groups.size(), Looked = 0;
		     K-- > 0 && Looked < LookBack && !Joined;) {
			Group &G = Groups[K];

			if (G.L != L)
				continue;
			Looked++;
			auto *D = dyn_cast<SCEVConstant>(
				SE.getMinusSCEV(S, G.Ptr));
			if (!D || D->getAPInt().getMinSignedBits() > 32 ||
			    std::abs(D->getAPInt().getSExtValue()) >
				    (int64_t)MaxSpan)
				continue;
			G.P.push_back({ I, D->getAPInt().getSExtValue() });
			Joined = true;
		}
		if (!Joined)
			Groups.push_back({ S, L, { { I, 0 } } });
	}

	for (Group &Gr : Groups) {
		SmallVector<Piece, 4> &G = Gr.P;

		if (G.size() < 2)
			continue;
		for (const Piece &Lead : G) {
			Access &A = Accesses[Lead.Idx];

			if (Drop[Lead.Idx] || A.Span)
				continue;
			/* The accesses that run whenever Lead does, by offset. */
			SmallVector<Piece, 4> With;
			With.push_back(Lead);
			for (const Piece &P : G)
				if (P.Idx != Lead.Idx && !Drop[P.Idx] &&
				    !Accesses[P.Idx].Span &&
				    alwaysFollows(A.Inst, Accesses[P.Idx].Inst,
						  DT, PDT, LoopI, TLI))
					With.push_back(P);
			if (With.size() < 2)
				continue;
			llvm::sort(With, [](const Piece &X, const Piece &Y) {
				return X.Off < Y.Off;
			});
			/* The run of touching or overlapping bytes with Lead's. */
			SmallVector<Piece, 4> Run;
			int64_t Lo = 0, Hi = 0;
			bool HasLead = false;
			for (const Piece &P : With) {
				int64_t End =
					P.Off + (int64_t)Accesses[P.Idx].Size;

				if (Run.empty() || P.Off > Hi) {
					if (HasLead)
						break;
					Run.clear();
					Lo = P.Off;
					Hi = End;
				}
				Run.push_back(P);
				Hi = std::max(Hi, End);
				HasLead |= P.Idx == Lead.Idx;
			}
			bool Aligned = getLoadStoreAlignment(
					       Accesses[Run[0].Idx].Inst) >= 8;
			if (Run.size() < 2 ||
			    (uint64_t)(Hi - Lo) >
				    (Aligned ? MaxSpan : MaxSpanUnaligned) ||
			    (Writes && (!Aligned || (Hi - Lo) % 8)))
				continue;
			IRBuilder<> IRB(A.Inst);
			A.Ptr = IRB.CreateConstGEP1_64(
				IRB.getInt8Ty(),
				IRB.CreatePointerCast(A.Ptr, I8Ptr),
				Lo - Lead.Off);
			A.Size = (uint64_t)(Hi - Lo);
			A.Span = true;
			for (const Piece &P : Run)
				if (P.Idx != Lead.Idx)
					Drop[P.Idx] = true;
			(Writes ? St.MergedWrites : St.Merged) += Run.size();
		}
	}
	dropMarked(Accesses, Drop);
}

/* A location for inserted calls: the access's, or the function's. */
DebugLoc locationFor(Instruction *I)
{
	if (I->getDebugLoc())
		return I->getDebugLoc();
	if (DISubprogram *SP = I->getFunction()->getSubprogram())
		return DILocation::get(I->getContext(), SP->getLine(), 0, SP);
	return DebugLoc();
}

/*
 * A loop whose accesses can be checked before it, as ranges: nothing in
 * it may synchronize, and it leaves only from its latch, so that once
 * entered (from its preheader) it runs every block that dominates the
 * latch on every iteration, to the count ScalarEvolution computes.
 */
bool coalescable(Loop *L, const TargetLibraryInfo &TLI,
		 bool NeedPreheader = true)
{
	if ((NeedPreheader && !L->getLoopPreheader()) || !L->getLoopLatch() ||
	    L->getExitingBlock() != L->getLoopLatch())
		return false;
	for (BasicBlock *BB : L->blocks())
		for (Instruction &I : *BB)
			if (maySync(I, TLI))
				return false;
	return true;
}

/*
 * A loop count ScalarEvolution gives for a step that is a value divides
 * by that value (fft's `i += len`: (max(n, 1) - 1) /u len), which it
 * will not expand where the divisor may be zero.  Where the loop runs
 * the step is not zero, so dividing by umax(step, 1) gives the same
 * count there, and the check made before the loop never divides by
 * zero on a path that skips it.
 */
struct GuardDivisors : SCEVRewriteVisitor<GuardDivisors> {
	using SCEVRewriteVisitor::SCEVRewriteVisitor;

	const SCEV *visitUDivExpr(const SCEVUDivExpr *E)
	{
		const SCEV *L = visit(E->getLHS()), *R = visit(E->getRHS());

		if (!isa<SCEVConstant>(R))
			R = SE.getUMaxExpr(R, SE.getOne(R->getType()));
		return SE.getUDivExpr(L, R);
	}
};

/* Whether @S is umax(X, 1): a divisor GuardDivisors made. */
static bool isGuardedDivisor(const SCEV *S)
{
	auto *Max = dyn_cast<SCEVUMaxExpr>(S);

	if (!Max)
		return false;
	for (const SCEV *Op : Max->operands())
		if (Op->isOne())
			return true;
	return false;
}

/*
 * For the safety test only: @S with each division by a guarded divisor
 * replaced by its operands, which is safe to expand where they are.
 */
struct UndivideGuarded : SCEVRewriteVisitor<UndivideGuarded> {
	using SCEVRewriteVisitor::SCEVRewriteVisitor;

	const SCEV *visitUDivExpr(const SCEVUDivExpr *E)
	{
		const SCEV *L = visit(E->getLHS()), *R = visit(E->getRHS());

		if (isGuardedDivisor(E->getRHS()))
			return SE.getAddExpr(L, R);
		return SE.getUDivExpr(L, R);
	}
};

static bool safeToExpandAt(const SCEV *S, const Instruction *At,
			   ScalarEvolution &SE)
{
	UndivideGuarded U(SE);

	return isSafeToExpandAt(U.visit(S), At, SE);
}

/*
 * Accesses of one loop that walk memory together: same kind, same step
 * (a constant or a value invariant in the loop), first addresses a
 * constant apart.  Spans are the bytes each member touches in the first
 * iteration, from Base.
 */
struct CoalesceGroup {
	Loop *L;
	bool IsWrite;
	const SCEV *Step;
	const SCEV *Base;
	const SCEV *Btc; /* how many more times than once it steps */
	SmallVector<unsigned, 4> Members; /* indices in Accesses */
	SmallVector<std::pair<int64_t, int64_t>, 4> Spans;
};

/*
 * Whether @G's bytes, which leave gaps, can still be checked before its
 * loop: reads of one 8-byte element every so many elements, less than a
 * read-log group (512 bytes) apart, up (a red-black sweep, the real
 * parts of an array of complex numbers), in each iteration or in
 * iterations an unrolled loop made into one (each span one element, all
 * as far apart as the step is over their number).  The runtime checks
 * those elements and not the gaps, which may be another thread's, and
 * takes a group's elements at once (on_nest_walk()).  Returns the
 * elements' distance, 0 if not; @G.Spans must be sorted.
 */
static int64_t stridedElements(const CoalesceGroup &G)
{
	auto *StepC = dyn_cast<SCEVConstant>(G.Step);

	if (!ClCoalesceStrided || !StepC)
		return 0;
	int64_t Step = StepC->getAPInt().getSExtValue();
	int64_t N = (int64_t)G.Spans.size();
	int64_t Apart = Step / N;
	for (int64_t I = 0; I < N; I++)
		if (G.Spans[I].second - G.Spans[I].first != 8 ||
		    G.Spans[I].first != G.Spans[0].first + I * Apart)
			return 0;
	if (Apart * N != Step || Apart <= 8 || Apart >= 512 || Apart % 8)
		return 0;
	return Apart;
}

/*
 * Unrolling a column walk (a loop stepping by a row length, a value)
 * by U gives U groups whose first addresses are one row apart, each
 * stepping U rows: together they are one walk stepping a row, U times
 * as long.  Merge such sets, so that the loops around them can make
 * the walk a block.  Exact: the merged group describes the same bytes.
 */
/*
 * @S divided by @U when every term of it is a multiple of @U with a
 * constant factor (32 n / 4 = 8 n), else null.  ScalarEvolution's own
 * division does not fold 32 n /u 4: it allows for 32 n wrapping.
 */
const SCEV *divideExactly(ScalarEvolution &SE, const SCEV *S, unsigned U)
{
	if (auto *C = dyn_cast<SCEVConstant>(S)) {
		const APInt &V = C->getAPInt();

		if (V.srem(U) != 0)
			return nullptr;
		return SE.getConstant(V.sdiv(U));
	}
	if (auto *Mul = dyn_cast<SCEVMulExpr>(S)) {
		auto *C = dyn_cast<SCEVConstant>(Mul->getOperand(0));
		if (!C || C->getAPInt().srem(U) != 0)
			return nullptr;
		SmallVector<const SCEV *, 4> Ops(Mul->operands());
		Ops[0] = SE.getConstant(C->getAPInt().sdiv(U));
		return SE.getMulExpr(Ops);
	}
	if (auto *Add = dyn_cast<SCEVAddExpr>(S)) {
		SmallVector<const SCEV *, 4> Ops;
		for (const SCEV *Op : Add->operands()) {
			const SCEV *D = divideExactly(SE, Op, U);
			if (!D)
				return nullptr;
			Ops.push_back(D);
		}
		return SE.getAddExpr(Ops);
	}
	return nullptr;
}

void mergeUnrolled(ScalarEvolution &SE, SmallVectorImpl<CoalesceGroup> &Groups)
{
	SmallVector<CoalesceGroup, 16> Out;
	SmallVector<bool, 16> Taken(Groups.size(), false);

	for (unsigned I = 0; I < Groups.size(); I++) {
		if (Taken[I])
			continue;
		CoalesceGroup &G = Groups[I];
		SmallVector<unsigned, 8> Set = { I };

		for (unsigned J = I + 1; J < Groups.size(); J++)
			if (!Taken[J] && Groups[J].L == G.L &&
			    Groups[J].IsWrite == G.IsWrite &&
			    Groups[J].Step == G.Step &&
			    Groups[J].Btc == G.Btc &&
			    Groups[J].Spans == G.Spans)
				Set.push_back(J);
		unsigned U = Set.size();
		Type *Ty = G.Step->getType();
		const SCEV *Row = U > 1 && !isa<SCEVConstant>(G.Step) ?
					  divideExactly(SE, G.Step, U) :
					  nullptr;
		if (!Row) {
			Out.push_back(G);
			continue;
		}
		/* Which member is first, and the others each k rows after it. */
		int First = -1;
		for (unsigned A : Set) {
			SmallVector<bool, 8> Seen(U, false);
			bool Fits = true;

			for (unsigned B : Set) {
				const SCEV *Diff = SE.getMinusSCEV(
					Groups[B].Base, Groups[A].Base);
				unsigned K = 0;

				while (K < U &&
				       SE.getMulExpr(SE.getConstant(Ty, K),
						     Row) != Diff)
					K++;
				if (K == U || Seen[K]) {
					Fits = false;
					break;
				}
				Seen[K] = true;
			}
			if (Fits) {
				First = A;
				break;
			}
		}
		if (First < 0) {
			Out.push_back(G);
			continue;
		}
		CoalesceGroup M = Groups[First];
		M.Step = Row;
		/* U steps of a row per iteration: U (Btc + 1) - 1 rows on. */
		M.Btc = SE.getAddExpr(SE.getMulExpr(SE.getConstant(Ty, U),
						    G.Btc),
				      SE.getConstant(Ty, U - 1));
		M.Members.clear();
		for (unsigned A : Set) {
			Taken[A] = true;
			M.Members.append(Groups[A].Members.begin(),
					 Groups[A].Members.end());
		}
		Out.push_back(M);
	}
	Groups.assign(Out.begin(), Out.end());
}

/*
 * Check the accesses of coalescable loops that, together, walk one block
 * of memory, once, before the loop, as a range: one call instead of a
 * check per access and iteration.  Every conflict that check finds is a
 * race of the accesses it stands for: they all run after it in the same
 * region, since nothing in between may synchronize
 * (Documentation/instrumentation-pass.md).  The accesses it covers are
 * dropped from @Accesses.
 *
 * Accesses are grouped by loop, kind, step and base address; a group
 * covers one block when the bytes its members touch in one iteration
 * are one span at least a step long, so that consecutive iterations'
 * spans meet: an array walked element by element, or by an unrolled or
 * vectorized loop (four vector stores 16 bytes apart, stepping by 64),
 * or a struct's fields walked together.  A strided walk (every other
 * element) is no block: its gaps may be another thread's.
 */
/*
 * After blocks were added to @F's loops (preheaders, exits of their
 * own), which the utilities doing it keep the dominator tree and loop
 * info up to date for: drop every other analysis of @F.
 */
void Instrumenter::keepLoopsOnly(Function &F)
{
	PreservedAnalyses PA;

	PA.preserve<DominatorTreeAnalysis>();
	PA.preserve<LoopAnalysis>();
	PA.preserve<TargetLibraryAnalysis>();
	FAM.invalidate(F, PA);
}

void Instrumenter::coalesce(Function &F, SmallVectorImpl<Access> &Accesses)
{
	LoopInfo *LIp = &FAM.getResult<LoopAnalysis>(F);
	const TargetLibraryInfo &TLI = FAM.getResult<TargetLibraryAnalysis>(F);

	if (LIp->empty())
		return;
	/*
	 * The end of the pipeline leaves many loops without a preheader
	 * (the entry test branches straight to the header): give the ones
	 * that qualify otherwise a block for their range checks, then ask
	 * again for the analyses that changed.
	 */
	bool Split = false;
	DominatorTree *DTp = &FAM.getResult<DominatorTreeAnalysis>(F);
	for (Loop *L : LIp->getLoopsInPreorder())
		if (!L->getLoopPreheader() && coalescable(L, TLI, false))
			Split |= InsertPreheaderForLoop(L, DTp, LIp, nullptr,
							false) != nullptr;
	if (Split)
		keepLoopsOnly(F);
	LoopInfo &LI = FAM.getResult<LoopAnalysis>(F);
	ScalarEvolution &SE = FAM.getResult<ScalarEvolutionAnalysis>(F);
	DominatorTree &DT = FAM.getResult<DominatorTreeAnalysis>(F);

	SmallVector<CoalesceGroup, 16> Groups;
	DenseMap<Loop *, bool> Ok;
	SmallVector<bool, 64> Moved(Accesses.size(), false);
	/*
	 * @L's backedge-taken count, as an address-sized integer, with
	 * its divisors guarded (GuardDivisors), or null.
	 */
	DenseMap<Loop *, const SCEV *> Counts;
	auto Btc = [&](Loop *L) {
		auto It = Counts.find(L);
		if (It != Counts.end())
			return It->second;
		const SCEV *N = SE.getBackedgeTakenCount(L);
		if (isa<SCEVCouldNotCompute>(N))
			N = nullptr;
		else
			N = GuardDivisors(SE).visit(
				SE.getTruncateOrZeroExtend(N, IntPtr));
		return Counts.insert({ L, N }).first->second;
	};
	/* Whether @L is coalescable() with a count. */
	auto LoopOk = [&](Loop *L) {
		auto It = Ok.find(L);
		if (It == Ok.end())
			It = Ok.insert({ L, coalescable(L, TLI) && Btc(L) })
				     .first;
		return It->second;
	};

	for (unsigned I = 0; I < Accesses.size(); I++) {
		const Access &A = Accesses[I];
		Loop *L = LI.getLoopFor(A.Inst->getParent());

		/* A small copy's pieces (a struct assigned) walk too. */
		auto *MI = dyn_cast<MemIntrinsic>(A.Inst);
		if (!L ||
		    !(MI || isa<LoadInst>(A.Inst) || isa<StoreInst>(A.Inst)) ||
		    (MI ? MI->isVolatile() : A.Inst->isVolatile()) ||
		    isVtableAccess(A.Inst))
			continue;
		if (!LoopOk(L) ||
		    !DT.dominates(A.Inst->getParent(), L->getLoopLatch()))
			continue;
		/*
		 * A step may be a value (a column walk's row length): such a
		 * group is no block by itself, but may be one with the loops
		 * around it.  It may be zero: an address the loop does not
		 * move (a row a fully unrolled inner loop updated) is
		 * accessed on every iteration, and the loops around may walk
		 * it.
		 */
		const SCEV *Ptr = SE.getSCEV(A.Ptr), *First, *StepS;
		if (SE.isLoopInvariant(Ptr, L)) {
			First = Ptr;
			StepS = SE.getZero(IntPtr);
		} else {
			auto *AR = dyn_cast<SCEVAddRecExpr>(Ptr);
			if (!AR || AR->getLoop() != L || !AR->isAffine())
				continue;
			First = AR->getStart();
			StepS = SE.getTruncateOrSignExtend(
				AR->getStepRecurrence(SE), IntPtr);
		}
		if (auto *StepC = dyn_cast<SCEVConstant>(StepS))
			if (StepC->getAPInt().getMinSignedBits() > 48)
				continue;
		CoalesceGroup *G = nullptr;
		int64_t Off = 0;
		for (CoalesceGroup &H : Groups) {
			if (H.L != L || H.IsWrite != A.IsWrite ||
			    H.Step != StepS)
				continue;
			auto *D = dyn_cast<SCEVConstant>(
				SE.getMinusSCEV(First, H.Base));
			if (D && D->getAPInt().getMinSignedBits() <= 48) {
				G = &H;
				Off = D->getAPInt().getSExtValue();
				break;
			}
		}
		if (!G) {
			Groups.push_back(
				{ L, A.IsWrite, StepS, First, Btc(L), {}, {} });
			G = &Groups.back();
		}
		G->Members.push_back(I);
		G->Spans.push_back({ Off, Off + (int64_t)A.Size });
	}
	mergeUnrolled(SE, Groups);

	/* Writes first: a write range covers a read range of the same bytes. */
	std::stable_sort(Groups.begin(), Groups.end(),
			 [](const CoalesceGroup &X, const CoalesceGroup &Y) {
				 return X.IsWrite > Y.IsWrite;
			 });
	/*
	 * Each group as a nest: the bytes [Base, Base + Size) its members
	 * touch in the first iteration, repeated for each loop from the
	 * group's outwards (Dims, innermost first) Btc + 1 times, Stride
	 * apart.  At the group's loop that is one dimension; a loop around
	 * it that cannot synchronize either, that enters the inner loop on
	 * every iteration and whose counts and strides do not change under
	 * it adds one, or none when the group's bytes do not move with it.
	 * The nest is checked before the outermost loop where its bytes
	 * still form one block (Dense() below): a matrix column walked by
	 * the inner loop of a product is no block, but the columns of all
	 * the middle loop's iterations are the whole matrix.
	 */
	struct Nest {
		Loop *At = nullptr; /* checked in its preheader */
		const SCEV *Base = nullptr;
		int64_t Size = 0;
		SmallVector<std::pair<const SCEV *, const SCEV *>, 3>
			Dims; /* (stride, backedge-taken count) */
		/*
		 * Conditions (and the value each must have) under which the
		 * loops inside run on every iteration of the loops around them
		 * (the tests unrolling and rotation put in front of a loop);
		 * invariant in At, so the check is made under them too.
		 */
		SmallVector<std::pair<Value *, bool>, 4> Guards;
	};
	const unsigned MaxNestDims = 3, MaxGuards = 4;
	/* Calls to make only when their condition holds, after the walk. */
	SmallVector<std::pair<CallInst *, Value *>, 8> Guarded;
	/*
	 * Whether the nest's bytes are one block whatever the values its
	 * strides and counts take: a dimension whose stride is at most the
	 * extent covered so far extends it without a gap.  Only decides
	 * where to check: the runtime checks the bytes the nest describes,
	 * block or not.
	 */
	/* A stride's size: a walk down a constant stride is as dense. */
	auto Magnitude = [&](const SCEV *S) {
		if (auto *SC = dyn_cast<SCEVConstant>(S))
			if (SC->getAPInt().isNegative())
				return SE.getNegativeSCEV(S);
		return S;
	};
	auto Dense = [&](const Nest &N) {
		const SCEV *Extent = SE.getConstant(IntPtr, N.Size);
		SmallVector<bool, 3> Used(N.Dims.size(), false);
		unsigned Left = N.Dims.size();

		for (bool Progress = true; Progress && Left;) {
			Progress = false;
			for (unsigned I = 0; I < N.Dims.size(); I++) {
				const SCEV *S = Magnitude(N.Dims[I].first);

				if (Used[I])
					continue;
				if (!SE.isKnownPredicate(ICmpInst::ICMP_ULE, S,
							 Extent))
					continue;
				Extent = SE.getAddExpr(
					SE.getMulExpr(S, N.Dims[I].second),
					Extent);
				Used[I] = true;
				Left--;
				Progress = true;
			}
		}
		return Left == 0;
	};
	/*
	 * Whether the runtime makes blocks of more than one element of the
	 * nest's (a dimension's stride is at most its size): a tile of a
	 * matrix's column walks is a row's stretch per tile row, one block
	 * each, even where the tile rows are far apart.
	 */
	auto Merges = [&](const Nest &N) {
		const SCEV *Size = SE.getConstant(IntPtr, N.Size);

		for (auto &D : N.Dims)
			if (SE.isKnownPredicate(ICmpInst::ICMP_ULE,
						Magnitude(D.first), Size))
				return true;
		return false;
	};

	struct Emitted {
		Loop *L;
		bool IsWrite;
		const SCEV *Base;
		int64_t Size;
		SmallVector<std::pair<const SCEV *, const SCEV *>, 3> Dims;
		SmallVector<std::pair<Value *, bool>, 4> Guards;
	};
	SmallVector<Emitted, 16> Done;
	SCEVExpander Expander(SE, DL, "valor.range");

	for (CoalesceGroup &G : Groups) {
		if (G.IsWrite && !ClCoalesceWrites)
			continue;
		llvm::sort(G.Spans);
		int64_t Lo = G.Spans[0].first, Hi = G.Spans[0].second;
		bool OneSpan = true;
		for (auto &Sp : G.Spans) {
			if (Sp.first > Hi)
				OneSpan = false;
			Hi = std::max(Hi, Sp.second);
		}
		int64_t Apart = stridedElements(G);
		if (!OneSpan && !Apart)
			continue;

		Nest N, Strided;
		if (Apart) {
			/* Each element's own iteration: a one-loop nest. */
			const SCEV *K = SE.getConstant(IntPtr, G.Spans.size());

			Strided.At = G.L;
			Strided.Base = SE.getAddExpr(
				G.Base, SE.getConstant(IntPtr, Lo, true));
			Strided.Size = 8;
			Strided.Dims.push_back(
				{ SE.getConstant(IntPtr, Apart),
				  SE.getMinusSCEV(
					  SE.getMulExpr(
						  SE.getAddExpr(
							  G.Btc,
							  SE.getOne(IntPtr)),
						  K),
					  SE.getOne(IntPtr)) });
		}
		N.At = G.L;
		N.Base = SE.getAddExpr(
			G.Base, SE.getConstant(IntPtr, Lo, /*isSigned=*/true));
		N.Size = Hi - Lo;
		N.Dims.push_back({ G.Step, G.Btc });
		/* Where it may be checked, innermost first. */
		SmallVector<Nest, 4> Candidates;
		if (OneSpan && Dense(N))
			Candidates.push_back(N);
		/* Spans with gaps are no block in any loop around. */
		while (Loop *P = OneSpan ? N.At->getParentLoop() : nullptr) {
			BasicBlock *PH = N.At->getLoopPreheader();

			if (!LoopOk(P))
				break;
			bool Invariant = true;
			for (auto &D : N.Dims)
				Invariant &= SE.isLoopInvariant(D.first, P) &&
					     SE.isLoopInvariant(D.second, P);
			for (auto &Gd : N.Guards)
				Invariant &= P->isLoopInvariant(Gd.first);
			if (!Invariant)
				break;
			/*
			 * Entered under tests that do not change in P, the
			 * first made on every iteration of P, each next one
			 * only where the one before it leads: then on every
			 * iteration or on none.
			 */
			bool Entered = true;
			for (BasicBlock *To = PH;
			     !DT.dominates(To, P->getLoopLatch());) {
				BasicBlock *Test = To->getSinglePredecessor();
				auto *Br =
					Test ? dyn_cast<BranchInst>(
						       Test->getTerminator()) :
					       nullptr;
				if (!Br || !Br->isConditional() ||
				    LI.getLoopFor(Test) != P ||
				    Br->getSuccessor(0) ==
					    Br->getSuccessor(1) ||
				    !P->isLoopInvariant(Br->getCondition()) ||
				    N.Guards.size() == MaxGuards) {
					Entered = false;
					break;
				}
				N.Guards.push_back(
					{ Br->getCondition(),
					  Br->getSuccessor(0) == To });
				To = Test;
			}
			if (!Entered)
				break;
			if (!SE.isLoopInvariant(N.Base, P)) {
				auto *AR = dyn_cast<SCEVAddRecExpr>(N.Base);
				if (!AR || AR->getLoop() != P ||
				    !AR->isAffine() ||
				    N.Dims.size() == MaxNestDims)
					break;
				const SCEV *Step = SE.getTruncateOrSignExtend(
					AR->getStepRecurrence(SE), IntPtr);
				if (!SE.isLoopInvariant(Step, P))
					break;
				N.Dims.push_back({ Step, Btc(P) });
				N.Base = AR->getStart();
			}
			N.At = P;
			if (Dense(N) || (ClCoalesceGapped && Merges(N)))
				Candidates.push_back(N);
		}
		if (Strided.At)
			Candidates.insert(Candidates.begin(), Strided);
		/* The outermost whose values exist before it. */
		auto Expandable = [&](const Nest &N) {
			Instruction *At =
				N.At->getLoopPreheader()->getTerminator();
			bool Ok = safeToExpandAt(N.Base, At, SE);

			for (auto &D : N.Dims)
				Ok &= safeToExpandAt(D.first, At, SE) &&
				      safeToExpandAt(D.second, At, SE);
			for (auto &Gd : N.Guards)
				if (auto *CI = dyn_cast<Instruction>(Gd.first))
					Ok &= DT.dominates(CI, At);
			return Ok;
		};
		while (!Candidates.empty() && !Expandable(Candidates.back()))
			Candidates.pop_back();
		if (Candidates.empty())
			continue;
		Nest &Best = Candidates.back();
		Instruction *At = Best.At->getLoopPreheader()->getTerminator();

		for (unsigned I : G.Members)
			Moved[I] = true;
		St.Coalesced += G.Members.size();
		/* A write nest covers a read nest of the same bytes. */
		bool Covered = false;
		for (const Emitted &E : Done)
			Covered |= E.L == Best.At && E.Base == Best.Base &&
				   E.Size == Best.Size && E.Dims == Best.Dims &&
				   E.Guards == Best.Guards &&
				   (E.IsWrite || !G.IsWrite);
		if (Covered)
			continue;
		Done.push_back({ Best.At, G.IsWrite, Best.Base, Best.Size,
				 Best.Dims, Best.Guards });
		St.LoopRanges++;

		Instruction *Site = Accesses[G.Members[0]].Inst;
		IRBuilder<> IRB(At);
		IRB.SetCurrentDebugLocation(locationFor(Site));
		Value *When = nullptr;
		for (auto &Gd : Best.Guards) {
			Value *V = Gd.second ? Gd.first :
					       IRB.CreateNot(Gd.first);
			When = When ? IRB.CreateAnd(When, V) : V;
		}
		auto *StepC = dyn_cast<SCEVConstant>(G.Step);
		if (Best.Dims.size() == 1 && StepC &&
		    Best.Size >= std::abs(StepC->getAPInt().getSExtValue())) {
			/* One loop's walk, up or down, or none: a range. */
			int64_t Step = StepC->getAPInt().getSExtValue();
			uint64_t Abs = Step < 0 ? -(uint64_t)Step :
						  (uint64_t)Step;
			const SCEV *Span =
				SE.getMulExpr(SE.getConstant(IntPtr, Abs),
					      Best.Dims[0].second);
			const SCEV *Len = SE.getAddExpr(
				Span, SE.getConstant(IntPtr, Best.Size));
			const SCEV *LoS =
				Step > 0 ?
					Best.Base :
					SE.getAddExpr(Best.Base,
						      SE.getNegativeSCEV(Span));
			Value *LoV =
				Expander.expandCodeFor(LoS, LoS->getType(), At);
			Value *LenV = Expander.expandCodeFor(Len, IntPtr, At);
			CallInst *Call = IRB.CreateCall(
				M.getOrInsertFunction(
					G.IsWrite && InlineChecks ?
						names::PassWriteRange :
					G.IsWrite    ? names::WriteRange :
					InlineChecks ? names::PassReadRange :
						       names::ReadRange,
					Type::getVoidTy(C), I8Ptr, IntPtr),
				{ IRB.CreatePointerCast(LoV, I8Ptr), LenV });
			if (When)
				Guarded.push_back({ Call, When });
			continue;
		}
		SmallVector<Value *, 8> Args;
		Value *BaseV = Expander.expandCodeFor(Best.Base,
						      Best.Base->getType(), At);
		Args.push_back(IRB.CreatePointerCast(BaseV, I8Ptr));
		Args.push_back(ConstantInt::get(IntPtr, Best.Size));
		for (unsigned I = 0; I < MaxNestDims; I++) {
			if (I < Best.Dims.size()) {
				Args.push_back(Expander.expandCodeFor(
					Best.Dims[I].first, IntPtr, At));
				Args.push_back(Expander.expandCodeFor(
					SE.getAddExpr(Best.Dims[I].second,
						      SE.getOne(IntPtr)),
					IntPtr, At));
			} else {
				Args.push_back(ConstantInt::get(IntPtr, 0));
				Args.push_back(ConstantInt::get(IntPtr, 1));
			}
		}
		SmallVector<Type *, 8> Params(Args.size(), IntPtr);
		Params[0] = I8Ptr;
		CallInst *Call = IRB.CreateCall(
			M.getOrInsertFunction(
				G.IsWrite ? names::PassWriteNest :
					    names::PassReadNest,
				FunctionType::get(Type::getVoidTy(C), Params,
						  false)),
			Args);
		if (When)
			Guarded.push_back({ Call, When });
	}
	for (auto &GC : Guarded) {
		Instruction *Then = SplitBlockAndInsertIfThen(
			GC.second, GC.first, false, nullptr, &DT, &LI);
		GC.first->moveBefore(Then);
	}

	dropMarked(Accesses, Moved);
}

void Instrumenter::insertCheck(const Access &A)
{
	IRBuilder<> IRB(A.Inst);
	Value *Addr;
	int Idx = sizeIndex(A.Size);

	IRB.SetCurrentDebugLocation(locationFor(A.Site ? A.Site : A.Inst));
	Addr = IRB.CreatePointerCast(A.Ptr, I8Ptr);

	if (isVtableAccess(A.Inst)) {
		Type *VPtrPtr = I8Ptr->getPointerTo();

		St.Vptrs++;
		if (A.IsWrite) {
			Value *V = cast<StoreInst>(A.Inst)->getValueOperand();
			V = IRB.CreateBitOrPointerCast(V, I8Ptr);
			IRB.CreateCall(M.getOrInsertFunction(names::VptrUpdate,
							     Type::getVoidTy(C),
							     VPtrPtr, I8Ptr),
				       { IRB.CreatePointerCast(A.Ptr, VPtrPtr),
					 V });
		} else {
			IRB.CreateCall(
				M.getOrInsertFunction(names::VptrRead,
						      Type::getVoidTy(C),
						      VPtrPtr),
				{ IRB.CreatePointerCast(A.Ptr, VPtrPtr) });
		}
		return;
	}
	if (A.Span) {
		const char *Name = A.IsWrite	? (InlineChecks ?
							   names::CheckWriteSpan :
							   names::WriteRange) :
				   InlineChecks ? names::CheckReadSpan :
						  names::ReadRange;
		CallInst *CI = IRB.CreateCall(
			M.getOrInsertFunction(Name, Type::getVoidTy(C), I8Ptr,
					      IntPtr),
			{ Addr, ConstantInt::get(IntPtr, A.Size) });
		(A.IsWrite ? St.WriteSpans : St.Spans)++;
		if (InlineChecks)
			ToInline.push_back(CI);
		return;
	}
	if (Idx < 0) {
		St.Ranges++;
		IRB.CreateCall(M.getOrInsertFunction(
				       A.IsWrite ? names::WriteRange :
						   names::ReadRange,
				       Type::getVoidTy(C), I8Ptr, IntPtr),
			       { Addr, ConstantInt::get(IntPtr, A.Size) });
		return;
	}
	St.Checked++;
	const char *Name = InlineChecks ? names::Check[A.IsWrite][Idx] :
					  names::TsanAccess[A.IsWrite][Idx];
	CallInst *CI = IRB.CreateCall(
		M.getOrInsertFunction(Name, Type::getVoidTy(C), I8Ptr), Addr);
	if (InlineChecks)
		ToInline.push_back(CI);
}

FunctionCallee Instrumenter::atomicFn(const char *Op, unsigned Bits, Type *Ret,
				      ArrayRef<Type *> Args)
{
	std::string Name =
		std::string("__tsan_atomic") + std::to_string(Bits) + "_" + Op;

	return M.getOrInsertFunction(
		Name, FunctionType::get(Ret, Args, /*isVarArg=*/false));
}

/*
 * The read-modify-writes the ABI has no function for (min, max, floating
 * add and subtract) as a compare-and-swap loop of ABI calls, so that the
 * runtime sees them as the atomics they are.
 */
void Instrumenter::lowerRMWByCAS(AtomicRMWInst *RMW, Value *Ptr, Type *Ty,
				 int Mo)
{
	unsigned Bits = Ty->getIntegerBitWidth();
	Type *PtrTy = Ty->getPointerTo();
	BasicBlock *Head = RMW->getParent();
	BasicBlock *Done = Head->splitBasicBlock(RMW->getIterator());
	BasicBlock *Loop =
		BasicBlock::Create(C, "valor.rmw", Head->getParent(), Done);
	IRBuilder<> IRB(Head->getTerminator());
	Value *Order = ConstantInt::get(I32, ORDER_RELAXED);
	Value *First, *Old, *New, *Seen;
	Type *ValTy = RMW->getValOperand()->getType();

	IRB.SetCurrentDebugLocation(locationFor(RMW));
	First = IRB.CreateCall(atomicFn("load", Bits, Ty, { PtrTy, I32 }),
			       { Ptr, Order });
	Head->getTerminator()->setSuccessor(0, Loop);

	IRB.SetInsertPoint(Loop);
	PHINode *Phi = IRB.CreatePHI(Ty, 2);
	Phi->addIncoming(First, Head);
	Old = IRB.CreateBitOrPointerCast(Phi, ValTy);
	Value *V = RMW->getValOperand();
	switch (RMW->getOperation()) {
	case AtomicRMWInst::Max:
		New = IRB.CreateSelect(IRB.CreateICmpSGT(Old, V), Old, V);
		break;
	case AtomicRMWInst::Min:
		New = IRB.CreateSelect(IRB.CreateICmpSLT(Old, V), Old, V);
		break;
	case AtomicRMWInst::UMax:
		New = IRB.CreateSelect(IRB.CreateICmpUGT(Old, V), Old, V);
		break;
	case AtomicRMWInst::UMin:
		New = IRB.CreateSelect(IRB.CreateICmpULT(Old, V), Old, V);
		break;
	case AtomicRMWInst::FAdd:
		New = IRB.CreateFAdd(Old, V);
		break;
	default: /* FSub: lowerAtomic() sends no other here */
		New = IRB.CreateFSub(Old, V);
		break;
	}
	New = IRB.CreateBitOrPointerCast(New, Ty);
	Seen = IRB.CreateCall(atomicFn("compare_exchange_val", Bits, Ty,
				       { PtrTy, Ty, Ty, I32, I32 }),
			      { Ptr, Phi, New, ConstantInt::get(I32, Mo),
				ConstantInt::get(I32, failureOrder(Mo)) });
	Phi->addIncoming(Seen, Loop);
	IRB.CreateCondBr(IRB.CreateICmpEQ(Seen, Phi), Done, Loop);

	RMW->replaceAllUsesWith(Old);
	RMW->eraseFromParent();
}

/* An atomic instruction or fence as the tsan ABI call that does it. */
void Instrumenter::lowerAtomic(Instruction *I)
{
	IRBuilder<> IRB(I);
	IRB.SetCurrentDebugLocation(locationFor(I));

	if (auto *F = dyn_cast<FenceInst>(I)) {
		bool Signal = F->getSyncScopeID() == SyncScope::SingleThread;

		IRB.CreateCall(
			M.getOrInsertFunction(Signal ? names::SignalFence :
						       names::ThreadFence,
					      Type::getVoidTy(C), I32),
			ConstantInt::get(I32, tsanOrder(F->getOrdering())));
		F->eraseFromParent();
		St.Atomics++;
		return;
	}

	Value *Ptr = getLoadStorePointerOperand(I);
	Type *ValTy;
	if (auto *RMW = dyn_cast<AtomicRMWInst>(I)) {
		Ptr = RMW->getPointerOperand();
		ValTy = RMW->getValOperand()->getType();
	} else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(I)) {
		Ptr = CX->getPointerOperand();
		ValTy = CX->getNewValOperand()->getType();
	} else {
		ValTy = getLoadStoreType(I);
	}
	if (!Ptr || Ptr->getType()->getPointerAddressSpace() != 0)
		return;
	uint64_t Size = DL.getTypeStoreSize(ValTy).getFixedSize();
	if (sizeIndex(Size) < 0 || DL.getTypeSizeInBits(ValTy) != Size * 8)
		return; /* no ABI function: left as it is */
	unsigned Bits = Size * 8;
	Type *Ty = IntegerType::get(C, Bits);
	Type *PtrTy = Ty->getPointerTo();
	Value *P = IRB.CreatePointerCast(Ptr, PtrTy);
	St.Atomics++;

	if (auto *LI = dyn_cast<LoadInst>(I)) {
		Value *Mo = ConstantInt::get(I32, tsanOrder(LI->getOrdering()));
		Value *V = IRB.CreateCall(
			atomicFn("load", Bits, Ty, { PtrTy, I32 }), { P, Mo });
		LI->replaceAllUsesWith(IRB.CreateBitOrPointerCast(V, ValTy));
		LI->eraseFromParent();
	} else if (auto *SI = dyn_cast<StoreInst>(I)) {
		Value *Mo = ConstantInt::get(I32, tsanOrder(SI->getOrdering()));
		Value *V =
			IRB.CreateBitOrPointerCast(SI->getValueOperand(), Ty);
		IRB.CreateCall(atomicFn("store", Bits, Type::getVoidTy(C),
					{ PtrTy, Ty, I32 }),
			       { P, V, Mo });
		SI->eraseFromParent();
	} else if (auto *RMW = dyn_cast<AtomicRMWInst>(I)) {
		int Mo = tsanOrder(RMW->getOrdering());
		const char *Op = nullptr;

		switch (RMW->getOperation()) {
		case AtomicRMWInst::Xchg:
			Op = "exchange";
			break;
		case AtomicRMWInst::Add:
			Op = "fetch_add";
			break;
		case AtomicRMWInst::Sub:
			Op = "fetch_sub";
			break;
		case AtomicRMWInst::And:
			Op = "fetch_and";
			break;
		case AtomicRMWInst::Or:
			Op = "fetch_or";
			break;
		case AtomicRMWInst::Xor:
			Op = "fetch_xor";
			break;
		case AtomicRMWInst::Nand:
			Op = "fetch_nand";
			break;
		case AtomicRMWInst::Max:
		case AtomicRMWInst::Min:
		case AtomicRMWInst::UMax:
		case AtomicRMWInst::UMin:
		case AtomicRMWInst::FAdd:
		case AtomicRMWInst::FSub:
			lowerRMWByCAS(RMW, P, Ty, Mo);
			return;
		default:
			St.Atomics--;
			return; /* an operation newer than this pass */
		}
		Value *V = IRB.CreateBitOrPointerCast(RMW->getValOperand(), Ty);
		Value *Old = IRB.CreateCall(
			atomicFn(Op, Bits, Ty, { PtrTy, Ty, I32 }),
			{ P, V, ConstantInt::get(I32, Mo) });
		RMW->replaceAllUsesWith(IRB.CreateBitOrPointerCast(Old, ValTy));
		RMW->eraseFromParent();
	} else if (auto *CX = dyn_cast<AtomicCmpXchgInst>(I)) {
		Value *Cmp =
			IRB.CreateBitOrPointerCast(CX->getCompareOperand(), Ty);
		Value *New =
			IRB.CreateBitOrPointerCast(CX->getNewValOperand(), Ty);
		int Mo = tsanOrder(CX->getSuccessOrdering());
		int Fmo = failureOrder(tsanOrder(CX->getFailureOrdering()));
		Value *Old = IRB.CreateCall(
			atomicFn("compare_exchange_val", Bits, Ty,
				 { PtrTy, Ty, Ty, I32, I32 }),
			{ P, Cmp, New, ConstantInt::get(I32, Mo),
			  ConstantInt::get(I32, Fmo) });
		Value *Ok = IRB.CreateICmpEQ(Old, Cmp);
		Value *Res = UndefValue::get(CX->getType());
		Res = IRB.CreateInsertValue(
			Res, IRB.CreateBitOrPointerCast(Old, ValTy), 0);
		Res = IRB.CreateInsertValue(Res, Ok, 1);
		CX->replaceAllUsesWith(Res);
		CX->eraseFromParent();
	}
}

/*
 * A block operation of a few bytes stays inline (the back end turns it
 * into a couple of moves): it gets a check per piece of at most 16
 * bytes, as the loads and stores it stands for would.  Returns false for
 * the others.
 */
bool Instrumenter::splitBlockOp(MemIntrinsic *MI,
				SmallVectorImpl<Access> &Accesses)
{
	auto *Len = dyn_cast<ConstantInt>(MI->getLength());

	if (!Len || Len->getZExtValue() > MaxInlineBlock)
		return false;
	uint64_t N = Len->getZExtValue();
	auto Pieces = [&](Value *Base, bool IsWrite) {
		if (!mayBeShared(Base, IsWrite))
			return;
		IRBuilder<> IRB(MI);
		Value *P = IRB.CreatePointerCast(Base, I8Ptr);

		for (uint64_t Off = 0; Off < N;) {
			uint64_t Piece = 16;

			while (Piece > N - Off)
				Piece /= 2;
			Value *Ptr = Off ? IRB.CreateConstInBoundsGEP1_64(
						   IRB.getInt8Ty(), P, Off) :
					   Base;
			Accesses.push_back({ MI, Ptr, Piece, IsWrite });
			Off += Piece;
		}
	};
	if (auto *MT = dyn_cast<MemTransferInst>(MI))
		Pieces(MT->getSource(), false);
	Pieces(MI->getDest(), true);
	St.MemOps++;
	return true;
}

/*
 * Any other memcpy, memmove, memset: a call to the C library's, which
 * the runtime intercepts (it checks the bytes, then does the copy with
 * the C library's own code).  Clang's ThreadSanitizer does the same.
 */
void Instrumenter::lowerBlockOp(MemIntrinsic *MI)
{
	IRBuilder<> IRB(MI);
	Value *Len;

	if (MI->getDestAddressSpace() != 0)
		return;
	auto *MT = dyn_cast<MemTransferInst>(MI);
	if (MT && MT->getSourceAddressSpace() != 0)
		return;
	/* Between locals that never escape: nothing to check. */
	if (!mayBeShared(MI->getDest(), true) &&
	    (!MT || !mayBeShared(MT->getSource(), false)))
		return;
	IRB.SetCurrentDebugLocation(locationFor(MI));
	Len = IRB.CreateIntCast(MI->getLength(), IntPtr, false);
	if (auto *MS = dyn_cast<MemSetInst>(MI)) {
		IRB.CreateCall(M.getOrInsertFunction(names::Memset, I8Ptr,
						     I8Ptr, I32, IntPtr),
			       { IRB.CreatePointerCast(MS->getDest(), I8Ptr),
				 IRB.CreateIntCast(MS->getValue(), I32, false),
				 Len });
	} else if (MT) {
		IRB.CreateCall(
			M.getOrInsertFunction(isa<MemMoveInst>(MT) ?
						      names::Memmove :
						      names::Memcpy,
					      I8Ptr, I8Ptr, I8Ptr, IntPtr),
			{ IRB.CreatePointerCast(MT->getDest(), I8Ptr),
			  IRB.CreatePointerCast(MT->getSource(), I8Ptr), Len });
	} else {
		return;
	}
	St.MemOps++;
	MI->eraseFromParent();
}

bool Instrumenter::instrumentFunction(Function &F)
{
	SmallVector<Access, 64> Accesses;
	SmallVector<Instruction *, 16> Atomics;
	SmallVector<MemIntrinsic *, 16> MemOps;

	for (Instruction &I : instructions(F)) {
		if (I.getMetadata("nosanitize"))
			continue;
		if (isa<FenceInst>(I) || isa<AtomicRMWInst>(I) ||
		    isa<AtomicCmpXchgInst>(I)) {
			Atomics.push_back(&I);
		} else if (auto *LI = dyn_cast<LoadInst>(&I)) {
			if (LI->isAtomic()) {
				Atomics.push_back(&I);
				continue;
			}
			if (LI->getType()->isSized() &&
			    !isa<ScalableVectorType>(LI->getType()) &&
			    mayBeShared(LI->getPointerOperand(), false))
				Accesses.push_back(
					{ LI, LI->getPointerOperand(),
					  DL.getTypeStoreSize(LI->getType())
						  .getFixedSize(),
					  false });
		} else if (auto *SI = dyn_cast<StoreInst>(&I)) {
			Type *Ty = SI->getValueOperand()->getType();

			if (SI->isAtomic()) {
				Atomics.push_back(&I);
				continue;
			}
			if (!isa<ScalableVectorType>(Ty) &&
			    mayBeShared(SI->getPointerOperand(), true))
				Accesses.push_back(
					{ SI, SI->getPointerOperand(),
					  DL.getTypeStoreSize(Ty).getFixedSize(),
					  true });
		} else if (auto *MI = dyn_cast<MemIntrinsic>(&I)) {
			if (!splitBlockOp(MI, Accesses))
				MemOps.push_back(MI);
		}
	}
	if (Accesses.empty() && Atomics.empty() && MemOps.empty())
		return false;
	if (ClCoalesce)
		coalesce(F, Accesses);
	if (ClElide) {
		checkWritesAtTheirReads(Accesses);
		elide(F, Accesses);
	}
	if (ClMergeReads)
		mergeNeighbours(F, Accesses, false);
	if (ClMergeWrites)
		mergeNeighbours(F, Accesses, true);
	if (ClPrefetch && InlineChecks)
		prefetchAtLocks(F, Accesses);
	for (const Access &A : Accesses)
		if (A.Size)
			insertCheck(A);
	for (Instruction *I : Atomics)
		lowerAtomic(I);
	for (MemIntrinsic *MI : MemOps)
		lowerBlockOp(MI);
	return true;
}

/* Whether @I calls one of names::Acquires. */
static bool isAcquire(const Instruction &I)
{
	auto *CB = dyn_cast<CallBase>(&I);
	Function *Callee = CB ? CB->getCalledFunction() : nullptr;

	if (!Callee || !Callee->isDeclaration())
		return false;
	for (const char *Name : names::Acquires)
		if (Callee->getName() == Name)
			return true;
	return false;
}

/*
 * @V, or a copy of it computed at @At: values that dominate @At as they
 * are, address arithmetic (GEPs, casts) over such values cloned, and a
 * load of a global variable's pointer (a table's base, not an access of
 * the program: only a prefetch uses it, and an address read early is
 * at worst one that is not fetched again).  Null beyond @Depth steps or
 * for anything else.  Clones go in @Made, in the order they must be
 * inserted.
 */
static Value *availableAt(Value *V, Instruction *At, const DominatorTree &DT,
			  unsigned Depth, SmallVectorImpl<Instruction *> &Made)
{
	auto *I = dyn_cast<Instruction>(V);

	if (!I)
		return isa<Constant>(V) || isa<Argument>(V) ? V : nullptr;
	if (DT.dominates(I, At))
		return I;
	if (!Depth)
		return nullptr;
	if (auto *LI = dyn_cast<LoadInst>(I)) {
		auto *GV = dyn_cast<GlobalVariable>(
			LI->getPointerOperand()->stripPointerCasts());

		if (LI->isAtomic() || LI->isVolatile() || !GV ||
		    GV->isThreadLocal() || !LI->getType()->isPointerTy())
			return nullptr;
		Instruction *Copy = LI->clone();
		/* What the load promised (nonnull, a range) may not hold yet. */
		Copy->dropUnknownNonDebugMetadata();
		Copy->setMetadata("nosanitize",
				  MDNode::get(LI->getContext(), {}));
		Made.push_back(Copy);
		return Copy;
	}
	if (!isa<GetElementPtrInst>(I) && !isa<CastInst>(I))
		return nullptr;
	SmallVector<Value *, 4> Ops;
	for (Value *Op : I->operands()) {
		Value *A = availableAt(Op, At, DT, Depth - 1, Made);

		if (!A)
			return nullptr;
		Ops.push_back(A);
	}
	Instruction *Copy = I->clone();
	for (unsigned K = 0; K < Ops.size(); K++)
		Copy->setOperand(K, Ops[K]);
	/* Computed from values read early: it may point anywhere. */
	if (auto *GEP = dyn_cast<GetElementPtrInst>(Copy))
		GEP->setIsInBounds(false);
	Made.push_back(Copy);
	return Copy;
}

/*
 * A lock call ends the caller's region in the runtime (validation, the
 * release of its writes, the lock's clock), a few hundred nanoseconds
 * in which the memory system idles; the critical section then misses
 * twice on its first accesses, on a cell word and on the memory (a
 * hash chain's bucket and node).  Its first checked accesses whose
 * addresses are known before the call are fetched before it, cell word
 * and memory (hashtable: 0.94 of its time).  A prefetch changes no
 * value and no verdict: it is neither an access nor a check.  Only
 * accesses that surely follow the call count: the walk stops at a
 * branch and at another call.
 */
void Instrumenter::prefetchAtLocks(Function &F, ArrayRef<Access> Accesses)
{
	const unsigned MaxAccesses = 2, MaxInstructions = 48;
	DenseMap<const Instruction *, const Access *> Checked;
	SmallVector<Instruction *, 8> Locks;

	for (Instruction &I : instructions(F))
		if (isAcquire(I))
			Locks.push_back(&I);
	if (Locks.empty())
		return;
	for (const Access &A : Accesses)
		if (A.Size)
			Checked[A.Inst] = &A;
	const DominatorTree &DT = FAM.getResult<DominatorTreeAnalysis>(F);
	for (Instruction *Lock : Locks) {
		BasicBlock::iterator It = std::next(Lock->getIterator());
		BasicBlock *BB = Lock->getParent();
		unsigned Found = 0, Seen = 0;

		while (Found < MaxAccesses && Seen++ < MaxInstructions) {
			if (It == BB->end()) {
				BB = BB->getSingleSuccessor();
				if (!BB)
					break;
				It = BB->begin();
				continue;
			}
			Instruction &I = *It++;
			auto Hit = Checked.find(&I);

			if (Hit == Checked.end()) {
				if (isa<CallBase>(I) &&
				    !isa<DbgInfoIntrinsic>(I))
					break;
				continue;
			}
			SmallVector<Instruction *, 4> Made;
			Value *Ptr = availableAt(Hit->second->Ptr, Lock, DT, 4,
						 Made);

			Found++;
			if (!Ptr)
				continue;
			for (Instruction *New : Made)
				New->insertBefore(Lock);
			IRBuilder<> IRB(Lock);
			/* A racy early load is undef in IR: fix a value. */
			CallInst *CI = IRB.CreateCall(
				M.getOrInsertFunction(
					names::Prefetch[Hit->second->IsWrite],
					Type::getVoidTy(C), I8Ptr),
				IRB.CreateFreeze(
					IRB.CreatePointerCast(Ptr, I8Ptr)));
			ToInline.push_back(CI);
			St.Prefetches++;
		}
	}
}

/*
 * Link the check's definitions the module now calls and inline them.
 * The bitcode's own module flags and identity are dropped first: the
 * program's module keeps its own.
 */
bool Instrumenter::linkAndInline()
{
	if (ToInline.empty())
		return true;
	StringRef Blob(valor_check_bc, valor_check_bc_end - valor_check_bc);
	auto Buf = MemoryBuffer::getMemBuffer(Blob, "valor-check.bc",
					      /*RequiresNullTerminator=*/false);
	Expected<std::unique_ptr<Module> > Check =
		parseBitcodeFile(Buf->getMemBufferRef(), C);

	if (!Check) {
		errs() << "valor pass: cannot read the embedded check: "
		       << toString(Check.takeError()) << "\n";
		return false;
	}
	std::unique_ptr<Module> CM = std::move(*Check);
	if (NamedMDNode *Flags = CM->getModuleFlagsMetadata())
		CM->eraseNamedMetadata(Flags);
	if (NamedMDNode *Ident = CM->getNamedMetadata("llvm.ident"))
		CM->eraseNamedMetadata(Ident);
	CM->setTargetTriple(M.getTargetTriple());
	CM->setDataLayout(M.getDataLayout());
	if (Linker::linkModules(M, std::move(CM), Linker::LinkOnlyNeeded)) {
		errs() << "valor pass: cannot link the embedded check\n";
		return false;
	}
	SmallPtrSet<Function *, 16> Used;
	for (CallInst *CI : ToInline) {
		Function *Callee = CI->getCalledFunction();
		InlineFunctionInfo IFI;

		if (!Callee || Callee->isDeclaration())
			continue;
		Used.insert(Callee);
		InlineFunction(*CI, IFI);
	}
	for (Function *F : Used) {
		F->setLinkage(GlobalValue::InternalLinkage);
		if (F->use_empty())
			F->eraseFromParent();
	}
	return true;
}

/*
 * Refer to the runtime's version symbol, so that linking with another
 * runtime fails, naming it (pass_abi.h).
 */
void Instrumenter::markModule()
{
	GlobalVariable *Ver = M.getGlobalVariable(names::AbiSymbol);

	if (!Ver)
		Ver = new GlobalVariable(M, I32, /*isConstant=*/true,
					 GlobalValue::ExternalLinkage, nullptr,
					 names::AbiSymbol);
	appendToCompilerUsed(M, { Ver });
}

/*
 * Functions of this module that cannot synchronize get the nosync
 * attribute, so that a loop calling them is still one region
 * (maySync()).  LLVM infers nosync itself, but not through the math
 * library, whose functions may set errno: blackscholes' pricing
 * function, called in its loop over options, made that loop's reads a
 * check each.  A function qualifies when no instruction of it may
 * sync, calls to other qualifying functions included (recursion too: the
 * set shrinks from all of them until nothing changes).  One that
 * another definition may replace at run time does not.
 */
void Instrumenter::markNoSync()
{
	SmallPtrSet<Function *, 32> Cand;
	bool Shrunk = true;
	bool Pic = M.getPICLevel() != PICLevel::NotPIC;

	for (Function &F : M)
		if (!F.isDeclaration() && !F.isInterposable() &&
		    !F.hasFnAttribute(Attribute::NoSync) &&
		    (F.hasLocalLinkage() || F.isDSOLocal() || !Pic))
			Cand.insert(&F);
	for (Function *F : Cand)
		F->addFnAttr(
			Attribute::NoSync); /* optimistic, until disproved */
	while (Shrunk) {
		Shrunk = false;
		for (Function &F : M) {
			if (!Cand.count(&F))
				continue;
			const TargetLibraryInfo &TLI =
				FAM.getResult<TargetLibraryAnalysis>(F);
			bool Sync = false;

			for (Instruction &I : instructions(F))
				if (maySync(I, TLI)) {
					Sync = true;
					break;
				}
			if (!Sync)
				continue;
			F.removeFnAttr(Attribute::NoSync);
			Cand.erase(&F);
			Shrunk = true;
		}
	}
	St.NoSync += Cand.size();
}

bool Instrumenter::run()
{
	bool Changed = false;

	if (M.getTargetTriple() != "" &&
	    Triple(M.getTargetTriple()).getArch() != Triple::x86_64)
		InlineChecks = false; /* the check is built for x86-64 */
	if (ClCoalesce)
		markNoSync();
	for (Function &F : M) {
		if (F.isDeclaration() ||
		    !F.hasFnAttribute(Attribute::SanitizeThread) ||
		    F.getName().startswith("__valor_check_"))
			continue;
		Changed |= instrumentFunction(F);
	}
	if (!Changed)
		return false;
	if (InlineChecks && !ToInline.empty()) {
		if (!linkAndInline())
			report_fatal_error(
				"valor pass: giving up on this module");
		markModule();
	}
	if (ClStats)
		errs() << "valor pass: " << M.getSourceFileName() << ": "
		       << St.Checked << " checks, " << St.Elided << " elided, "
		       << St.WritesAtReads << " writes checked at their read, "
		       << St.Merged << " reads merged into " << St.Spans
		       << " spans, " << St.MergedWrites
		       << " writes merged into " << St.WriteSpans
		       << " write spans, " << St.Coalesced << " coalesced into "
		       << St.LoopRanges << " loop ranges, " << St.Ranges
		       << " ranges, " << St.Vptrs << " vptr, " << St.Atomics
		       << " atomics, " << St.MemOps << " mem ops, " << St.Locals
		       << " local accesses, " << St.NoSync
		       << " functions found nosync, " << St.Prefetches
		       << " prefetches at locks\n";
	return true;
}

struct ValorInstrumentPass : PassInfoMixin<ValorInstrumentPass> {
	PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM)
	{
		FunctionAnalysisManager &FAM =
			MAM.getResult<FunctionAnalysisManagerModuleProxy>(M)
				.getManager();
		Instrumenter I(M, FAM);

		return I.run() ? PreservedAnalyses::none() :
				 PreservedAnalyses::all();
	}
	static bool isRequired()
	{
		return true; /* also at -O0 and in optnone functions */
	}
};

} /* namespace */

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo()
{
	return { LLVM_PLUGIN_API_VERSION, "valor", "1", [](PassBuilder &PB) {
			PB.registerOptimizerLastEPCallback(
				[](ModulePassManager &MPM, OptimizationLevel) {
					MPM.addPass(ValorInstrumentPass());
				});
		} };
}
