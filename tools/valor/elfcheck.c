// SPDX-License-Identifier: GPL-2.0
/*
 * Which runtime a program carries, read with libelf.
 *
 * A program built with `valor cc` defines __tsan_init itself (the
 * runtime archive is linked into it) and symbols only the Valor runtime
 * has: in .symtab (unless stripped) its internals and the engine, in
 * .dynsym (always: the dynamic list exports them) the <valor/valor.h>
 * API.  A program built with plain -fsanitize=thread either leaves
 * __tsan_init to libtsan.so (undefined, DT_NEEDED libtsan) or, with
 * -static-libtsan, defines it without any Valor symbol.
 */
#include "elfcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct elf_facts {
	bool tsan_init_defined;
	bool tsan_init_undefined;
	bool valor_marker;
	bool needs_libtsan;
};

/* Symbols only the Valor runtime defines. */
static bool is_valor_symbol(const char *name)
{
	return !strcmp(name, "valor_runtime_version") ||
	       !strcmp(name, "rt_init") || !strcmp(name, "rt_on_conflict") ||
	       !strcmp(name, "valor_ctx_new") || !strncmp(name, "valor_", 6);
}

static void scan_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			 struct elf_facts *f)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count;

	if (!data || !sh->sh_entsize)
		return;
	count = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		const char *name;
		bool defined;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		defined = sym.st_shndx != SHN_UNDEF;
		if (!strcmp(name, "__tsan_init")) {
			if (defined)
				f->tsan_init_defined = true;
			else
				f->tsan_init_undefined = true;
		} else if (defined && is_valor_symbol(name)) {
			f->valor_marker = true;
		}
	}
}

static void scan_dynamic(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			 struct elf_facts *f)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count;

	if (!data || !sh->sh_entsize)
		return;
	count = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Dyn dyn;
		const char *name;

		if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag != DT_NEEDED)
			continue;
		name = elf_strptr(elf, sh->sh_link, dyn.d_un.d_val);
		if (name && strstr(name, "libtsan"))
			f->needs_libtsan = true;
	}
}

enum elf_runtime elf_runtime_of(const char *path, char *why, unsigned len)
{
	struct elf_facts f = { 0 };
	enum elf_runtime verdict;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(why, len, "libelf: %s", elf_errmsg(-1));
		return ELF_UNREADABLE;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, len, "%s", strerror(errno));
		return ELF_UNREADABLE;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(why, len, "not an ELF file");
		if (elf)
			elf_end(elf);
		close(fd);
		return ELF_NOT_ELF;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			scan_symbols(elf, scn, &sh, &f);
		else if (sh.sh_type == SHT_DYNAMIC)
			scan_dynamic(elf, scn, &sh, &f);
	}
	elf_end(elf);
	close(fd);

	if (f.tsan_init_defined && f.valor_marker && !f.needs_libtsan)
		verdict = ELF_RUNTIME_VALOR;
	else if (f.tsan_init_defined || f.tsan_init_undefined ||
		 f.needs_libtsan)
		verdict = ELF_RUNTIME_LIBTSAN;
	else
		verdict = ELF_RUNTIME_NONE;
	if (len)
		why[0] = '\0';
	return verdict;
}
