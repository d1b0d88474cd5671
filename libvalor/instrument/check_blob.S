/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The check's bitcode (check.c), inside the plugin: the plugin is one
 * file and cannot be paired with the bitcode of another build.
 * VALOR_CHECK_BC is its path, from the Makefile.
 */
	.section .rodata
	.balign 16
	.globl valor_check_bc
	.hidden valor_check_bc
valor_check_bc:
	.incbin VALOR_CHECK_BC
	.globl valor_check_bc_end
	.hidden valor_check_bc_end
valor_check_bc_end:
	.byte 0

	.section .note.GNU-stack,"",@progbits
