// SPDX-License-Identifier: GPL-2.0
/*
 * Smoke test of valor.ko in the QEMU guest (tools/vmtest): the module is
 * loaded, /dev/valor is its character device, it speaks the uapi version
 * this tree was built with and refuses ioctls it does not know.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/valor.h>

#include "kselftest_harness.h"

#define VALOR_DEV "/dev/valor"

TEST(dev_node_is_a_character_device)
{
	struct stat st;

	ASSERT_EQ(0, stat(VALOR_DEV, &st))
	{
		TH_LOG("stat %s: %s (is valor.ko loaded?)", VALOR_DEV,
		       strerror(errno));
	}
	EXPECT_TRUE(S_ISCHR(st.st_mode))
	{
		TH_LOG("%s has mode %o", VALOR_DEV, st.st_mode);
	}
}

TEST(version_ioctl_returns_the_uapi_version)
{
	int fd = open(VALOR_DEV, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd)
	{
		TH_LOG("open %s: %s", VALOR_DEV, strerror(errno));
	}
	EXPECT_EQ(VALOR_UAPI_VERSION, ioctl(fd, VALOR_IOC_VERSION))
	{
		TH_LOG("errno %d (%s)", errno, strerror(errno));
	}
	close(fd);
}

TEST(unknown_ioctl_is_enotty)
{
	/* In the driver's block, past every number uapi defines. */
	const unsigned long unknown = _IO(VALOR_IOC_MAGIC, 0xfe);
	int fd = open(VALOR_DEV, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd)
	{
		TH_LOG("open %s: %s", VALOR_DEV, strerror(errno));
	}
	errno = 0;
	EXPECT_EQ(-1, ioctl(fd, unknown));
	EXPECT_EQ(ENOTTY, errno);
	/* A number of another driver's block is not ours either. */
	errno = 0;
	EXPECT_EQ(-1, ioctl(fd, _IO('T', 0x7f)));
	EXPECT_EQ(ENOTTY, errno);
	close(fd);
}

TEST_HARNESS_MAIN
