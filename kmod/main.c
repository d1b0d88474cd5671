// SPDX-License-Identifier: GPL-2.0
/*
 * valor.ko: page-fault tracking of a target process for Valor's attach
 * mode.  /dev/valor, one session per open file; see uapi/linux/valor.h
 * for the interface and Documentation/kmod.md for the mechanism.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/uaccess.h>

#include "valor_kmod.h"

unsigned long valor_default_max_pages = 65536;
module_param_named(max_pages, valor_default_max_pages, ulong, 0644);
MODULE_PARM_DESC(max_pages, "pages a new session may arm at once");

unsigned long valor_default_max_fault_rate = 200000;
module_param_named(max_fault_rate, valor_default_max_fault_rate, ulong, 0644);
MODULE_PARM_DESC(max_fault_rate,
		 "tracked faults per second a new session may take");

unsigned long valor_max_pages_total = 1UL << 20;
module_param_named(max_pages_total, valor_max_pages_total, ulong, 0644);
MODULE_PARM_DESC(max_pages_total, "pages armed at once by all sessions");

atomic_long_t valor_pages_total = ATOMIC_LONG_INIT(0);

static int valor_open(struct inode *inode, struct file *file)
{
	struct valor_session *s = valor_session_new();

	if (!s)
		return -ENOMEM;
	file->private_data = s;
	return stream_open(inode, file);
}

static int valor_release(struct inode *inode, struct file *file)
{
	valor_session_close(file->private_data);
	return 0;
}

static ssize_t valor_read(struct file *file, char __user *buf, size_t count,
			  loff_t *ppos)
{
	return valor_ring_read(file->private_data, buf, count,
			       file->f_flags & O_NONBLOCK);
}

static __poll_t valor_poll(struct file *file, poll_table *wait)
{
	return valor_ring_poll(file->private_data, file, wait);
}

static long ioctl_attach(struct valor_session *s, void __user *uarg)
{
	struct valor_attach a;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags || a.reserved || a.pid > INT_MAX)
		return -EINVAL;
	return valor_session_attach(s, a.pid);
}

static long ioctl_range(struct valor_session *s, unsigned int cmd,
			void __user *uarg)
{
	struct valor_range r;
	long err;

	if (copy_from_user(&r, uarg, sizeof(r)))
		return -EFAULT;
	if ((r.flags & ~VALOR_RANGE_ALL) || r.reserved)
		return -EINVAL;
	if (!s->attached)
		return -ENOTCONN;
	if (s->dead)
		return -ESRCH;
	if (cmd == VALOR_IOC_UNWATCH)
		err = valor_pages_unwatch_range(s, &r, VALOR_DISARM_UNWATCH);
	else
		err = valor_pages_arm_range(s, &r,
					    cmd == VALOR_IOC_SCAN ?
						    VALOR_MODE_SCAN :
						    VALOR_MODE_WATCH);
	if (err)
		return err;
	return copy_to_user(uarg, &r, sizeof(r)) ? -EFAULT : 0;
}

static long valor_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct valor_session *s = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct valor_limits lim;
	struct valor_kmod_stats st;
	long err;

	if (cmd == VALOR_IOC_VERSION)
		return VALOR_UAPI_VERSION;
	if (_IOC_TYPE(cmd) != VALOR_IOC_MAGIC)
		return -ENOTTY;
	if (mutex_lock_interruptible(&s->ioctl_lock))
		return -ERESTARTSYS;
	switch (cmd) {
	case VALOR_IOC_ATTACH:
		err = ioctl_attach(s, uarg);
		break;
	case VALOR_IOC_SCAN:
	case VALOR_IOC_WATCH:
	case VALOR_IOC_UNWATCH:
		err = ioctl_range(s, cmd, uarg);
		break;
	case VALOR_IOC_SET_LIMITS:
		err = -EFAULT;
		if (!copy_from_user(&lim, uarg, sizeof(lim)))
			err = valor_session_set_limits(s, &lim);
		break;
	case VALOR_IOC_GET_STATS:
		valor_session_stats(s, &st);
		err = copy_to_user(uarg, &st, sizeof(st)) ? -EFAULT : 0;
		break;
	case VALOR_IOC_DETACH:
		err = valor_session_detach(s);
		break;
	default:
		err = -ENOTTY;
	}
	mutex_unlock(&s->ioctl_lock);
	return err;
}

static const struct file_operations valor_fops = {
	.owner = THIS_MODULE,
	.open = valor_open,
	.release = valor_release,
	.read = valor_read,
	.poll = valor_poll,
	.unlocked_ioctl = valor_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = no_llseek,
};

static struct miscdevice valor_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "valor",
	.fops = &valor_fops,
	.mode = 0660,
};

static int __init valor_init(void)
{
	int err;

	err = valor_ksyms_init();
	if (err)
		return err;
	err = valor_pages_init();
	if (err)
		return err;
	err = valor_step_init();
	if (err)
		goto err_pages;
	err = valor_fault_init();
	if (err)
		goto err_step;
	err = misc_register(&valor_dev);
	if (err)
		goto err_fault;
	pr_info("ready: /dev/valor, TLB flush %s\n",
		valor_tlb_flush_is_ranged() ? "by range" : "of all CPUs");
	return 0;

err_fault:
	valor_fault_exit();
err_step:
	valor_step_exit();
err_pages:
	valor_pages_exit();
	return err;
}

/*
 * Open sessions and pending steps hold references on the module, so by
 * now nothing is armed and no trap or task work of ours is due.
 */
static void __exit valor_exit(void)
{
	misc_deregister(&valor_dev);
	valor_fault_exit();
	valor_step_exit();
	valor_pages_exit();
}

module_init(valor_init);
module_exit(valor_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Valor: page-fault tracking of a process for race detection");
MODULE_AUTHOR("The Valor for Linux developers");
