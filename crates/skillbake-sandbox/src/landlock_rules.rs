//! The Landlock ruleset of a spec, built in the parent (opening every granted path) so that the
//! child only has to enforce it.
//!
//! Every file-system right the kernel knows is handled (so everything not granted is denied),
//! TCP bind and connect are handled unless the network is unrestricted, and signals and abstract
//! UNIX sockets are scoped to the run. The ruleset is built for exactly the probed ABI with
//! [`CompatLevel::HardRequirement`]: if the kernel does not do what the probe said, building
//! fails instead of silently dropping a right.

use crate::resolve::Resolver;
use crate::{Error, Network};
use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope, ABI,
};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// What the file-system part of a spec grants, with paths as given.
pub(crate) struct FsGrants<'a> {
    pub(crate) read_only: &'a [PathBuf],
    pub(crate) read_write: &'a [PathBuf],
    pub(crate) executables: &'a [PathBuf],
    pub(crate) read_anywhere: bool,
    pub(crate) write_anywhere: bool,
    pub(crate) exec_anywhere: bool,
}

/// The rights of the read-write trees: regular files and directories only.
fn write_rights() -> BitFlags<AccessFs> {
    AccessFs::WriteFile
        | AccessFs::RemoveDir
        | AccessFs::RemoveFile
        | AccessFs::MakeDir
        | AccessFs::MakeReg
        | AccessFs::Refer
        | AccessFs::Truncate
}

fn read_rights() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::ReadDir
}

fn lerr(e: impl std::fmt::Display) -> Error {
    Error::Landlock(e.to_string())
}

/// Builds the ruleset for Landlock ABI `abi`.
/// Granted paths are opened at the place `paths` resolved them to.
pub(crate) fn build(
    abi: u32,
    fs: &FsGrants<'_>,
    paths: &Resolver,
    network: &Network,
) -> Result<RulesetCreated, Error> {
    let abi = ABI::from(i32::try_from(abi).unwrap_or(i32::MAX));
    let all = AccessFs::from_all(abi);
    let file_rights = AccessFs::from_file(abi);
    let net_all = AccessNet::from_all(abi);
    let handle_net = !matches!(network, Network::Unrestricted) && !net_all.is_empty();
    let scopes = Scope::from_all(abi);

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(lerr)?;
    if handle_net {
        ruleset = ruleset.handle_access(net_all).map_err(lerr)?;
    }
    if !scopes.is_empty() {
        ruleset = ruleset.scope(scopes).map_err(lerr)?;
    }
    let mut created = ruleset.create().map_err(lerr)?;

    let exec = if fs.exec_anywhere {
        BitFlags::from(AccessFs::Execute)
    } else {
        BitFlags::EMPTY
    };
    let ro = (read_rights() | exec) & all;
    let rw = (read_rights() | write_rights() | exec) & all;
    let mut grants: Vec<(&PathBuf, BitFlags<AccessFs>)> = Vec::new();
    grants.extend(fs.read_only.iter().map(|p| (p, ro)));
    grants.extend(fs.read_write.iter().map(|p| (p, rw)));
    grants.extend(
        fs.executables
            .iter()
            .map(|p| (p, (AccessFs::Execute | AccessFs::ReadFile) & all)),
    );
    let root = PathBuf::from("/");
    let mut anywhere = BitFlags::<AccessFs>::EMPTY;
    if fs.read_anywhere {
        anywhere |= read_rights() | exec;
    }
    if fs.write_anywhere {
        anywhere |= AccessFs::from_write(abi) | read_rights();
    }
    if !anywhere.is_empty() {
        grants.push((&root, anywhere & all));
    }
    for (path, rights) in grants {
        let known = paths.known(path);
        // O_PATH: a handle on the inode, not an open file (no read permission needed).
        let fd = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
            .open(known.map_or(path.as_path(), |r| r.path.as_path()))
            .map_err(|source| Error::Path {
                path: path.clone(),
                source,
            })?;
        let is_dir = match known {
            Some(r) => r.is_dir(),
            None => fd.metadata().map(|m| m.is_dir()).unwrap_or(false),
        };
        let rights = if is_dir { rights } else { rights & file_rights };
        if rights.is_empty() {
            continue;
        }
        created = created
            .add_rule(PathBeneath::new(fd, rights))
            .map_err(lerr)?;
    }

    if handle_net {
        if let Network::TcpConnect {
            ports,
            name_resolution,
        } = network
        {
            let mut tcp: Vec<u16> = ports.clone();
            if *name_resolution {
                tcp.push(53);
            }
            tcp.sort_unstable();
            tcp.dedup();
            for port in tcp {
                created = created
                    .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
                    .map_err(lerr)?;
            }
            // Kernels that also handle UDP: name resolution needs port 53 and an ephemeral bind.
            if *name_resolution && net_all.contains(AccessNet::ConnectSendUdp) {
                created = created
                    .add_rule(NetPort::new(53, AccessNet::ConnectSendUdp))
                    .map_err(lerr)?
                    .add_rule(NetPort::new(0, AccessNet::BindUdp))
                    .map_err(lerr)?;
            }
        }
    }
    Ok(created)
}

/// True when Landlock of this ABI also restricts UDP by port.
pub(crate) fn handles_udp(abi: u32) -> bool {
    let abi = ABI::from(i32::try_from(abi).unwrap_or(i32::MAX));
    AccessNet::from_all(abi).contains(AccessNet::ConnectSendUdp)
}
