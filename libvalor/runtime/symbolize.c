// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Symbolization with libdw, in process, without spawning anything.
 *
 * The modules are the process's mappings (dwfl_linux_proc_report), read
 * at the first report and again, at most once per report, when an
 * address falls in no known module (a library opened since).  Results
 * are cached per pc; strings live in an mmap'd arena that is never
 * freed, so frames handed out stay valid.
 *
 * libdw 0.188 finds a pc's compilation unit through .debug_aranges only,
 * which clang 14 does not emit: when that lookup fails (or answers with
 * a unit that does not contain the pc) we scan the module's units for
 * one whose ranges contain it.
 *
 * Locks: sym_lock around everything here (libdw is not thread-safe);
 * nothing else is taken inside it.  Callers are busy, so libdw's malloc
 * calls go straight to glibc.
 */
#include "symbolize.h"
#include "rt.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <fcntl.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef char *(*demangle_fn)(const char *mangled, char *buf, size_t *len,
			     int *status);

static atomic_int sym_lock;
static Dwfl *dwfl;
static int dwfl_state; /* 0: not started, 1: ready, -1: unusable */
static bool may_rereport;
static char *debuginfo_path;

/*
 * libdw is opened at the first report instead of being linked: a program
 * that never reports does not map it and the compression libraries it
 * needs (0.6 MB of the peak memory of every analysed process).  Every
 * libdw and libelf function used here is called through this table.
 */
#define DW_FUNCS(X)                     \
	X(dwfl_begin)                   \
	X(dwfl_report_begin)            \
	X(dwfl_linux_proc_report)       \
	X(dwfl_report_end)              \
	X(dwfl_module_getelf)           \
	X(dwfl_addrmodule)              \
	X(dwfl_getmodules)              \
	X(dwfl_module_addrdie)          \
	X(dwfl_module_nextcu)           \
	X(dwfl_module_info)             \
	X(dwfl_module_addrinfo)         \
	X(dwfl_linux_proc_find_elf)     \
	X(dwfl_standard_find_debuginfo) \
	X(dwarf_formudata)              \
	X(dwarf_formstring)             \
	X(dwarf_attr_integrate)         \
	X(dwarf_attr)                   \
	X(dwarf_haspc)                  \
	X(dwarf_tag)                    \
	X(dwarf_linesrc)                \
	X(dwarf_lineno)                 \
	X(dwarf_linecol)                \
	X(dwarf_getsrcfiles)            \
	X(dwarf_getsrc_die)             \
	X(dwarf_getscopes_die)          \
	X(dwarf_getscopes)              \
	X(dwarf_filesrc)                \
	X(dwarf_diename)                \
	X(gelf_getphdr)                 \
	X(elf_getphdrnum)

static struct {
#define DW_POINTER(f) __typeof__(&f) f;
	DW_FUNCS(DW_POINTER)
#undef DW_POINTER
} dw;

/* The find functions are libdw's: filled in by dw_open(). */
static Dwfl_Callbacks callbacks = {
	.debuginfo_path = &debuginfo_path,
};

/* ---- the arena: frames and strings, never freed ---- */

#define ARENA_CHUNK (256UL << 10)

static char *arena_cur;
static size_t arena_left;

static void *arena_alloc(size_t n, size_t align)
{
	size_t pad = (align - ((uintptr_t)arena_cur & (align - 1))) &
		     (align - 1);
	void *p;

	if (!arena_cur || pad + n > arena_left) {
		size_t size = n > ARENA_CHUNK ? (n + 4095) & ~(size_t)4095 :
						ARENA_CHUNK;

		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		arena_cur = p;
		arena_left = size;
		pad = 0;
	}
	p = arena_cur + pad;
	arena_cur += pad + n;
	arena_left -= pad + n;
	return p;
}

static const char *arena_strndup(const char *s, size_t n)
{
	char *d = arena_alloc(n + 1, 1);

	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

/* File and module names repeat in every frame: keep one copy of each. */
#define INTERN_SLOTS 4096
static const char *intern_tab[INTERN_SLOTS];

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static const char *intern(const char *s)
{
	uint64_t h;

	if (!s)
		return NULL;
	h = str_hash(s);
	for (unsigned i = 0; i < 32; i++) {
		const char **slot = &intern_tab[(h + i) & (INTERN_SLOTS - 1)];

		if (!*slot) {
			*slot = arena_strndup(s, strlen(s));
			return *slot;
		}
		if (!strcmp(*slot, s))
			return *slot;
	}
	return arena_strndup(s, strlen(s));
}

/* ---- the per-pc cache ---- */

#define PC_CACHE_SLOTS 8192

struct pc_entry {
	uintptr_t pc;
	const struct rt_frame *frame;
	unsigned n;
};

static struct pc_entry pc_cache[PC_CACHE_SLOTS];

static struct pc_entry *pc_slot(uintptr_t pc, bool *found)
{
	uint64_t h = (pc * 0x9E3779B97F4A7C15ULL) >> 40;

	for (unsigned i = 0; i < 32; i++) {
		struct pc_entry *e = &pc_cache[(h + i) & (PC_CACHE_SLOTS - 1)];

		if (e->frame && e->pc == pc) {
			*found = true;
			return e;
		}
		if (!e->frame) {
			*found = false;
			return e;
		}
	}
	*found = false;
	return NULL; /* full around here: symbolize without caching */
}

/* ---- libdw ---- */

static void report_modules(void)
{
	dw.dwfl_report_begin(dwfl);
	dw.dwfl_linux_proc_report(dwfl, getpid());
	dw.dwfl_report_end(dwfl, NULL, NULL);
}

static bool dw_open(void)
{
	void *h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		rt_log_printf("valor: cannot open libdw.so.1 (%s): stacks show "
			      "module+offset only (addr2line -e MODULE "
			      "OFFSET); install libdw1\n",
			      dlerror());
		return false;
	}
#define DW_RESOLVE(f)                                                \
	dw.f = (__typeof__(dw.f))dlsym(h, #f);                       \
	if (!dw.f) {                                                 \
		rt_log_printf("valor: libdw.so.1 has no %s: stacks " \
			      "show module+offset only\n",           \
			      #f);                                   \
		return false;                                        \
	}
	DW_FUNCS(DW_RESOLVE)
#undef DW_RESOLVE
	callbacks.find_elf = dw.dwfl_linux_proc_find_elf;
	callbacks.find_debuginfo = dw.dwfl_standard_find_debuginfo;
	return true;
}

static bool dwfl_ready(void)
{
	if (dwfl_state == 0) {
		dwfl = dw_open() ? dw.dwfl_begin(&callbacks) : NULL;
		dwfl_state = dwfl ? 1 : -1;
		if (dwfl)
			report_modules();
		may_rereport = false;
	}
	return dwfl_state == 1;
}

struct bss_search {
	uintptr_t addr;
	Dwfl_Module *found;
};

/*
 * Does a loadable segment of @mod, as its program headers size it in
 * memory, hold search->addr?  /proc/self/maps (what the modules come
 * from) lists the zero-filled tail of a large .bss as an anonymous
 * mapping that belongs to no module.
 */
static int in_segment(Dwfl_Module *mod, void **userdata, const char *name,
		      Dwarf_Addr start, void *arg)
{
	struct bss_search *search = arg;
	GElf_Addr bias;
	Elf *elf = dw.dwfl_module_getelf(mod, &bias);
	size_t n;

	(void)userdata;
	(void)name;
	(void)start;
	if (!elf || dw.elf_getphdrnum(elf, &n))
		return DWARF_CB_OK;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!dw.gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (search->addr >= bias + ph.p_vaddr &&
		    search->addr < bias + ph.p_vaddr + ph.p_memsz) {
			search->found = mod;
			return DWARF_CB_ABORT;
		}
	}
	return DWARF_CB_OK;
}

static Dwfl_Module *find_module(uintptr_t addr)
{
	Dwfl_Module *m = dw.dwfl_addrmodule(dwfl, addr);
	struct bss_search search = { .addr = addr };

	if (!m && may_rereport) {
		may_rereport = false;
		report_modules();
		m = dw.dwfl_addrmodule(dwfl, addr);
	}
	if (m)
		return m;
	dw.dwfl_getmodules(dwfl, in_segment, &search, 0);
	return search.found;
}

/*
 * The compilation unit of @pc.  libdwfl stretches every .debug_aranges
 * entry up to the next one, so in a program mixing gcc objects (which
 * have aranges) with clang ones (which do not) it answers with a wrong
 * unit: check its answer, and look through all units when it is wrong.
 */
static Dwarf_Die *find_cu(Dwfl_Module *mod, uintptr_t pc, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dw.dwfl_module_addrdie(mod, pc, bias);

	if (cu && dw.dwarf_haspc(cu, pc - *bias) == 1)
		return cu;
	cu = NULL;
	while ((cu = dw.dwfl_module_nextcu(mod, cu, bias)) != NULL)
		if (dw.dwarf_haspc(cu, pc - *bias) == 1)
			return cu;
	return NULL;
}

/*
 * libstdc++'s demangler, looked up at run time: it is loaded in C++
 * programs even when the link did not need it (--as-needed), never in C
 * ones, and we do not load it ourselves.
 */
static demangle_fn demangler(void)
{
	static demangle_fn fn;
	static bool looked;

	if (!looked) {
		*(void **)&fn = dlsym(RTLD_DEFAULT, "__cxa_demangle");
		looked = true;
	}
	return fn;
}

static const char *demangle(const char *name)
{
	const char *out = NULL;
	demangle_fn fn;
	char *d;
	int status = -1;

	if (!name || strncmp(name, "_Z", 2))
		return NULL;
	fn = demangler();
	if (!fn)
		return NULL;
	d = fn(name, NULL, NULL, &status);
	if (d && !status)
		out = arena_strndup(d, strlen(d));
	free(d);
	return out;
}

/* A symbol's name without its version ("stdout@GLIBC_2.2.5"). */
static const char *symbol_name(const char *s)
{
	const char *at;

	if (!s)
		return NULL;
	at = strchr(s, '@');
	return at ? arena_strndup(s, (size_t)(at - s)) : intern(s);
}

static const char *function_name(const char *elf_symbol)
{
	const char *d = demangle(elf_symbol);

	return d ? d : symbol_name(elf_symbol);
}

/*
 * A function's name from its DIE: the demangled linkage name (C++), else
 * its plain name, else the mangled one.
 */
static const char *die_function_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *linkage, *name, *d;

	linkage = dw.dwarf_formstring(
		dw.dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!linkage)
		linkage = dw.dwarf_formstring(dw.dwarf_attr_integrate(
			die, DW_AT_MIPS_linkage_name, &attr));
	d = demangle(linkage);
	if (d)
		return d;
	name = dw.dwarf_formstring(
		dw.dwarf_attr_integrate(die, DW_AT_name, &attr));
	if (name)
		return intern(name);
	return linkage ? intern(linkage) : NULL;
}

static bool is_runtime_cu(const char *name)
{
	return name && (strstr(name, "libvalor/runtime/") ||
			strstr(name, "libvalor/core/"));
}

static bool is_runtime_symbol(const char *name)
{
	return name &&
	       (!strncmp(name, "__tsan_", 7) || !strncmp(name, "rt_", 3) ||
		!strncmp(name, "valor_", 6));
}

static bool is_runtime_module(const char *path)
{
	const char *base;

	if (!path)
		return false;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return !strncmp(base, "libvalor", 8);
}

/*
 * Without libdw (not installed, or one without the functions we need):
 * the module that maps @addr and its load address, read from
 * /proc/self/maps, so that a frame reads "prog+0x14c7e" and can be
 * symbolized offline (addr2line -e prog 0x14c7e), not a bare address.
 * The load address is where the module's first page (file offset 0) is
 * mapped, as libdw has it.  Not dladdr(): it takes the dynamic linker's
 * lock, which a thread reporting from a constructor inside dlopen()
 * holds while it waits for the report lock.  Called with sym_lock held;
 * no malloc.
 */
static bool maps_lookup(uintptr_t addr, const char **module,
			uintptr_t *module_base)
{
	char buf[4096], path[4096] = "";
	uintptr_t base = 0;
	size_t len = 0, used = 0;
	bool found = false;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	for (;;) {
		char *nl = memchr(buf + used, '\n', len - used), *name;
		unsigned long start, end, off;
		int at = 0;

		if (!nl) {
			ssize_t n;

			memmove(buf, buf + used, len - used);
			len -= used;
			used = 0;
			n = read(fd, buf + len, sizeof(buf) - len);
			if (n <= 0)
				break;
			len += (size_t)n;
			continue;
		}
		/* start-end perms offset dev inode   path */
		*nl = 0;
		name = buf + used;
		used = (size_t)(nl - buf) + 1;
		if (sscanf(name, "%lx-%lx %*s %lx %*s %*s %n", &start, &end,
			   &off, &at) < 3 ||
		    !at || name[at] != '/')
			continue;
		name += at;
		if (strcmp(name, path)) {
			snprintf(path, sizeof(path), "%s", name);
			base = start - off;
		} else if (!off) {
			base = start;
		}
		if (addr >= start && addr < end) {
			found = true;
			break;
		}
	}
	close(fd);
	if (!found)
		return false;
	*module = intern(path);
	*module_base = base;
	return *module != NULL;
}

/*
 * The chain of inlined calls at @pc, innermost first, as eu-addr2line -i
 * finds it: the concrete scopes around the innermost function-like DIE;
 * every inlined call's caller is at the call's DW_AT_call_file/line.
 */
static unsigned inline_frames(Dwarf_Die *cu, Dwarf_Addr bias, uintptr_t pc,
			      struct rt_frame *out, unsigned max,
			      const char *file, int line, int col)
{
	Dwarf_Die *scopes = NULL, *chain = NULL, inner;
	Dwarf_Files *files = NULL;
	unsigned k = 0;
	int n;

	n = dw.dwarf_getscopes(cu, pc - bias, &scopes);
	if (n <= 0) {
		free(scopes);
		return 0;
	}
	inner = scopes[0];
	free(scopes);
	n = dw.dwarf_getscopes_die(&inner, &chain);
	if (n <= 0) {
		free(chain);
		return 0;
	}
	if (dw.dwarf_getsrcfiles(cu, &files, NULL))
		files = NULL;
	for (int i = 0; i < n && k < max; i++) {
		int tag = dw.dwarf_tag(&chain[i]);
		Dwarf_Attribute attr;
		Dwarf_Word v;

		if (tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_subprogram && tag != DW_TAG_entry_point)
			continue;
		out[k] = (struct rt_frame){
			.pc = pc,
			.function = die_function_name(&chain[i]),
			.file = intern(file),
			.line = line > 0 ? (unsigned)line : 0,
			.column = col > 0 ? (unsigned)col : 0,
			.inlined = tag == DW_TAG_inlined_subroutine,
		};
		k++;
		if (tag != DW_TAG_inlined_subroutine)
			break;
		/* The caller's position is where this call was inlined. */
		file = NULL;
		line = col = 0;
		if (files &&
		    !dw.dwarf_formudata(dw.dwarf_attr(&chain[i],
						      DW_AT_call_file, &attr),
					&v))
			file = dw.dwarf_filesrc(files, v, NULL, NULL);
		if (!dw.dwarf_formudata(dw.dwarf_attr(&chain[i],
						      DW_AT_call_line, &attr),
					&v))
			line = (int)v;
		if (!dw.dwarf_formudata(dw.dwarf_attr(&chain[i],
						      DW_AT_call_column, &attr),
					&v))
			col = (int)v;
	}
	free(chain);
	return k;
}

static unsigned symbolize_locked(uintptr_t pc, struct rt_frame *out,
				 unsigned max)
{
	struct rt_frame base = { .pc = pc };
	Dwfl_Module *mod;
	Dwarf_Addr start = 0, bias = 0;
	Dwarf_Die *cu;
	const char *module, *elf_symbol, *file = NULL;
	GElf_Off sym_off;
	GElf_Sym sym;
	GElf_Word shndx;
	Elf *elf;
	int line = 0, col = 0;
	unsigned n = 0;
	bool runtime, exported;

	mod = dwfl_ready() ? find_module(pc) : NULL;
	if (!mod) {
		if (!dwfl && maps_lookup(pc, &base.module, &base.module_base))
			base.runtime = is_runtime_module(base.module);
		out[0] = base;
		return 1;
	}
	module = dw.dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL,
				     NULL);
	base.module = intern(module);
	base.module_base = (uintptr_t)start;
	elf_symbol = dw.dwfl_module_addrinfo(mod, pc, &sym_off, &sym, &shndx,
					     &elf, &bias);
	exported = elf_symbol && GELF_ST_BIND(sym.st_info) != STB_LOCAL;

	cu = find_cu(mod, pc, &bias);
	if (cu) {
		Dwarf_Line *l = dw.dwarf_getsrc_die(cu, pc - bias);

		if (l) {
			file = dw.dwarf_linesrc(l, NULL, NULL);
			dw.dwarf_lineno(l, &line);
			dw.dwarf_linecol(l, &col);
		}
		runtime = is_runtime_cu(dw.dwarf_diename(cu));
	} else {
		runtime = is_runtime_symbol(elf_symbol);
	}
	runtime = runtime || is_runtime_module(module);

	if (cu)
		n = inline_frames(cu, bias, pc, out, max, file, line, col);
	if (!n) {
		out[0] = base;
		out[0].file = intern(file);
		out[0].line = line > 0 ? (unsigned)line : 0;
		out[0].column = col > 0 ? (unsigned)col : 0;
		n = 1;
	}
	/* The outermost frame is the ELF symbol's function. */
	if (!out[n - 1].function)
		out[n - 1].function = function_name(elf_symbol);
	for (unsigned i = 0; i < n; i++) {
		out[i].module = base.module;
		out[i].module_base = base.module_base;
		out[i].runtime = runtime;
	}
	out[n - 1].exported = exported;
	return n;
}

unsigned rt_symbolize_pc(uintptr_t pc, struct rt_frame *out, unsigned max)
{
	/* Inline chains deeper than this are cut (outermost calls lost). */
	struct rt_frame tmp[16];
	struct pc_entry *e;
	struct rt_frame *kept;
	unsigned n;
	bool found;

	if (!max)
		return 0;
	rt_lock(&sym_lock);
	e = pc_slot(pc, &found);
	if (found) {
		n = e->n < max ? e->n : max;
		memcpy(out, e->frame, n * sizeof(*out));
		rt_unlock(&sym_lock);
		return n;
	}
	n = symbolize_locked(pc, tmp, sizeof(tmp) / sizeof(tmp[0]));
	kept = e ? arena_alloc(n * sizeof(*kept), _Alignof(struct rt_frame)) :
		   NULL;
	if (kept) {
		memcpy(kept, tmp, n * sizeof(*kept));
		e->pc = pc;
		e->n = n;
		e->frame = kept;
	}
	rt_unlock(&sym_lock);
	if (n > max)
		n = max;
	memcpy(out, tmp, n * sizeof(*out));
	return n;
}

static bool is_data_symbol(const GElf_Sym *s)
{
	switch (GELF_ST_TYPE(s->st_info)) {
	case STT_OBJECT:
	case STT_TLS:
	case STT_COMMON:
	case STT_NOTYPE:
		return true;
	default:
		return false;
	}
}

bool rt_symbolize_data(uintptr_t addr, struct rt_data_symbol *out)
{
	Dwfl_Module *mod;
	Dwarf_Addr start = 0, bias = 0;
	GElf_Off off = 0;
	GElf_Sym sym;
	GElf_Word shndx;
	Elf *elf;
	const char *name;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	rt_lock(&sym_lock);
	mod = dwfl_ready() ? find_module(addr) : NULL;
	if (mod) {
		out->module = intern(dw.dwfl_module_info(
			mod, NULL, &start, NULL, NULL, NULL, NULL, NULL));
		out->module_base = (uintptr_t)start;
		name = dw.dwfl_module_addrinfo(mod, addr, &off, &sym, &shndx,
					       &elf, &bias);
		if (name && is_data_symbol(&sym) &&
		    (off < sym.st_size || (!sym.st_size && !off))) {
			out->name = symbol_name(name);
			out->start = (uintptr_t)(addr - off);
			out->size = (size_t)sym.st_size;
		}
		ok = true;
	} else if (!dwfl) {
		ok = maps_lookup(addr, &out->module, &out->module_base);
	}
	rt_unlock(&sym_lock);
	return ok;
}

void rt_symbolize_begin(void)
{
	rt_lock(&sym_lock);
	may_rereport = true;
	rt_unlock(&sym_lock);
}

void rt_symbolize_after_fork_child(void)
{
	atomic_store(&sym_lock, 0);
}
