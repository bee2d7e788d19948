//! The seccomp filter every sandbox loads: the system calls no bot needs and kernel
//! exploits most often start from ([`DENIED_SYSCALLS`]), compiled once by `seccompiler`
//! and handed to bubblewrap.

use super::*;

/// When a denied system call is refused.
#[derive(Clone, Copy, Debug)]
pub(super) enum Refused {
    /// Always.
    Always,
    /// When its first argument has all of these bits (a flag).
    WithFlags(u64),
    /// When its second argument is this value (an `ioctl` request).
    Request(u64),
    /// When its first argument is neither of these values.
    Unless([u64; 2]),
}

/// System calls refused inside the sandbox (EPERM), by name and number, and when: the
/// blocklist of Flatpak's sandbox (`flatpak-run.c`, `setup_seccomp`: its list for apps
/// and the one it adds outside development mode), which runs any desktop application,
/// Java, Node and Python among them, under bubblewrap; with the calls of Docker's default
/// profile (moby, `profiles/seccomp/default.json`) that Flatpak lets through: io_uring,
/// eBPF, userfaultfd and the loading of kernels and modules. Each is either open to
/// unprivileged processes, needed by no bot and the start of a large share of the
/// kernel's privilege escalations (io_uring, keyrings, eBPF, perf events, userfaultfd,
/// NUMA page moves), or guarded only by a capability check deep in the kernel (mounts,
/// namespaces, modules, kexec), which the filter stops before any of that code runs.
///
/// New user namespaces are refused twice: `unshare` (any namespace) and `clone` with
/// `CLONE_NEWUSER` here, before the kernel's namespace code runs, and every way at
/// once by bubblewrap's `--disable-userns`, which also covers `clone3`, whose flags a
/// filter cannot read (they are behind a pointer); `clone3` itself stays allowed, as the
/// C library makes its threads with it.
// `as u64`: an ioctl request's type is not u64 on every target.
#[allow(clippy::unnecessary_cast)]
pub(super) const DENIED_SYSCALLS: &[(&str, libc::c_long, Refused)] = &[
    ("syslog", libc::SYS_syslog, Refused::Always),
    #[cfg(target_arch = "x86_64")]
    ("uselib", libc::SYS_uselib, Refused::Always),
    ("acct", libc::SYS_acct, Refused::Always),
    ("quotactl", libc::SYS_quotactl, Refused::Always),
    ("add_key", libc::SYS_add_key, Refused::Always),
    ("keyctl", libc::SYS_keyctl, Refused::Always),
    ("request_key", libc::SYS_request_key, Refused::Always),
    ("move_pages", libc::SYS_move_pages, Refused::Always),
    ("mbind", libc::SYS_mbind, Refused::Always),
    ("get_mempolicy", libc::SYS_get_mempolicy, Refused::Always),
    ("set_mempolicy", libc::SYS_set_mempolicy, Refused::Always),
    ("migrate_pages", libc::SYS_migrate_pages, Refused::Always),
    ("unshare", libc::SYS_unshare, Refused::Always),
    ("setns", libc::SYS_setns, Refused::Always),
    ("mount", libc::SYS_mount, Refused::Always),
    ("umount2", libc::SYS_umount2, Refused::Always),
    ("pivot_root", libc::SYS_pivot_root, Refused::Always),
    ("chroot", libc::SYS_chroot, Refused::Always),
    (
        "clone",
        libc::SYS_clone,
        Refused::WithFlags(libc::CLONE_NEWUSER as u64),
    ),
    (
        "ioctl",
        libc::SYS_ioctl,
        Refused::Request(libc::TIOCSTI as u64),
    ),
    (
        "ioctl",
        libc::SYS_ioctl,
        Refused::Request(libc::TIOCLINUX as u64),
    ),
    ("open_tree", libc::SYS_open_tree, Refused::Always),
    ("move_mount", libc::SYS_move_mount, Refused::Always),
    ("fsopen", libc::SYS_fsopen, Refused::Always),
    ("fsconfig", libc::SYS_fsconfig, Refused::Always),
    ("fsmount", libc::SYS_fsmount, Refused::Always),
    ("fspick", libc::SYS_fspick, Refused::Always),
    ("mount_setattr", libc::SYS_mount_setattr, Refused::Always),
    (
        "perf_event_open",
        libc::SYS_perf_event_open,
        Refused::Always,
    ),
    // Only Linux's own personality, or the query, as Flatpak.
    (
        "personality",
        libc::SYS_personality,
        Refused::Unless([0, 0xffff_ffff]),
    ),
    ("ptrace", libc::SYS_ptrace, Refused::Always),
    ("io_uring_setup", libc::SYS_io_uring_setup, Refused::Always),
    ("io_uring_enter", libc::SYS_io_uring_enter, Refused::Always),
    (
        "io_uring_register",
        libc::SYS_io_uring_register,
        Refused::Always,
    ),
    ("bpf", libc::SYS_bpf, Refused::Always),
    ("userfaultfd", libc::SYS_userfaultfd, Refused::Always),
    ("kexec_load", libc::SYS_kexec_load, Refused::Always),
    (
        "kexec_file_load",
        libc::SYS_kexec_file_load,
        Refused::Always,
    ),
    ("init_module", libc::SYS_init_module, Refused::Always),
    ("finit_module", libc::SYS_finit_module, Refused::Always),
    ("delete_module", libc::SYS_delete_module, Refused::Always),
];
/// On x86_64 the same calls also exist with this bit set (the x32 ABI): refused too,
/// or the filter could be walked around.
#[cfg(target_arch = "x86_64")]
pub(super) const X32_SYSCALL_BIT: libc::c_long = 0x4000_0000;

/// The seccomp filter of every sandbox, as the bytes bubblewrap reads (an array of
/// `struct sock_filter`), compiled once.
// `i64::from(c_long)` is a conversion on 32-bit targets only.
#[allow(clippy::useless_conversion)]
pub(super) fn seccomp_program() -> Result<&'static [u8], SandboxError> {
    static PROGRAM: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    let program = PROGRAM.get_or_init(|| {
        use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, SeccompRule, TargetArch};
        let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
        let mut rules: std::collections::BTreeMap<i64, Vec<SeccompRule>> =
            std::collections::BTreeMap::new();
        for &(_, nr, refused) in DENIED_SYSCALLS {
            let rule = refused_rule(refused).map_err(|e| e.to_string())?;
            let mut numbers = vec![i64::from(nr)];
            #[cfg(target_arch = "x86_64")]
            numbers.push(i64::from(nr | X32_SYSCALL_BIT));
            for number in numbers {
                let entry = rules.entry(number).or_default();
                entry.extend(rule.clone());
            }
        }
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )
        .map_err(|e| e.to_string())?;
        let program: BpfProgram = filter
            .try_into()
            .map_err(|e: seccompiler::BackendError| e.to_string())?;
        let mut bytes = Vec::with_capacity(program.len() * 8);
        for instruction in program {
            bytes.extend_from_slice(&instruction.code.to_ne_bytes());
            bytes.push(instruction.jt);
            bytes.push(instruction.jf);
            bytes.extend_from_slice(&instruction.k.to_ne_bytes());
        }
        Ok(bytes)
    });
    program
        .as_deref()
        .map_err(|e| SandboxError::Unusable(format!("cannot build the seccomp filter: {e}")))
}

/// The filter's rules for a call refused `refused` (none: always).
pub(super) fn refused_rule(
    refused: Refused,
) -> Result<Vec<seccompiler::SeccompRule>, seccompiler::BackendError> {
    use seccompiler::{SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompRule};
    let condition = |arg, len, op, value| SeccompCondition::new(arg, len, op, value);
    Ok(match refused {
        Refused::Always => Vec::new(),
        Refused::WithFlags(flags) => vec![SeccompRule::new(vec![condition(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(flags),
            flags,
        )?])?],
        Refused::Request(request) => vec![SeccompRule::new(vec![condition(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            request,
        )?])?],
        Refused::Unless([a, b]) => vec![SeccompRule::new(vec![
            condition(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, a)?,
            condition(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, b)?,
        ])?],
    })
}

/// A pipe holding the seccomp filter, for bubblewrap to read: its read end (close-on-exec
/// in the referee; the child clears the flag before it runs bubblewrap). The filter is a
/// few hundred bytes, far less than a pipe holds, so writing it all never blocks.
pub(crate) fn seccomp_filter() -> Result<std::os::fd::OwnedFd, SandboxError> {
    use std::io::Write;
    let program = seccomp_program()?;
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| SandboxError::Unusable(format!("cannot make a pipe: {e}")))?;
    File::from(write)
        .write_all(program)
        .map_err(|e| SandboxError::Unusable(format!("cannot write the seccomp filter: {e}")))?;
    Ok(read)
}
