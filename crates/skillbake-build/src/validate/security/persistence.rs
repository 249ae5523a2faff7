//! `persistence`: scripts and instructions that make code run again outside the task: a cron
//! entry installed, a line appended to a shell start file, a git hook written, a service, launch
//! agent, login item or `Run` registry key created, a key added to `authorized_keys`.
//!
//! A crontab written back through nothing but filters that drop lines (`crontab -l | grep -v
//! NAME | crontab -`, `sed '/NAME/d'`) removes an entry: an uninstall step, not persistence.

use super::scan::{Pat, Role, Scope};
use crate::diagnostic::Code;

const A: Role = Role::Alone;

/// The code these patterns raise.
pub const CODE: Code = Code::Persistence;

/// The patterns.
pub const PATTERNS: &[Pat] = &[
    Pat {
        triggers: &["crontab"],
        re: r"\|\s*crontab\s+-\s*$|\|\s*crontab\s+-\s*[;&)]|\bcrontab\s+-l[^\n]*;\s*echo[^\n]*\|\s*crontab|crontab\s+/tmp/",
        needs: None,
        unless: None,
        unless_before: Some(
            r"^[^|;\n]*\bcrontab\s+-l\b[^|;\n]*(\|\s*(grep\s+(-\w+\s+)*-\w*v\w*\b|sed\s+(-\w+\s+)*[\x22']?/[^/\n]*/d)[^|;\n]*)+$",
        ),
        what: "it installs a cron job",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &["/etc/cron", "/var/spool/cron"],
        re: r"(>>?|tee\s+(-a\s+)?|cp\s+\S+\s+|open\s*\(\s*[\x22'])\s*/(etc/cron|var/spool/cron)",
        needs: None,
        unless: None,
        unless_before: None,
        what: "it writes a system cron job",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &[
            ".bashrc",
            ".zshrc",
            ".bash_profile",
            ".profile",
            ".zprofile",
            ".zshenv",
            "config.fish",
        ],
        re: r"(>>|tee\s+-a)\s*[\x22']?(~|\$HOME|\$\{HOME\}|/root|/home/\w+)/\.(bashrc|zshrc|bash_profile|profile|zprofile|zshenv|bash_login|config/fish/config\.fish)\b[^\n]*$",
        needs: Some(r">>|tee\s+-a"),
        unless: None,
        unless_before: None,
        what: "it appends to a shell start file",
        scope: Scope::Scripts,
        role: A,
    },
    Pat {
        triggers: &[
            ".bashrc",
            ".zshrc",
            ".bash_profile",
            ".profile",
            ".zprofile",
        ],
        re: r"open\s*\([^\n]*\.(bashrc|zshrc|bash_profile|profile|zprofile)[\x22'][^\n]*[\x22']a[\x22']|appendFileSync\s*\([^\n]*\.(bashrc|zshrc|bash_profile|profile|zprofile)",
        needs: Some(r"open\s*\(|appendFileSync"),
        unless: None,
        unless_before: None,
        what: "it appends to a shell start file",
        scope: Scope::Scripts,
        role: A,
    },
    Pat {
        triggers: &[".git/hooks"],
        re: r"(>>?|tee\s+(-a\s+)?|cp\s+\S+\s+|mv\s+\S+\s+|ln\s+-s\w*\s+\S+\s+|open\s*\(\s*[^\n]*|writeFileSync\s*\(\s*[^\n]*|write_text\s*\()\s*[\x22']?\S*\.git/hooks/\w+",
        needs: None,
        unless: None,
        unless_before: None,
        what: "it writes a git hook",
        scope: Scope::Scripts,
        role: A,
    },
    Pat {
        triggers: &[
            "systemctl",
            "launchctl",
            "launchagents",
            "launchdaemons",
            "/etc/systemd",
            "schtasks",
            "currentversion\\run",
            "update-rc.d",
            "/etc/init.d",
            "loginitems",
            "login item",
        ],
        re: r"\bsystemctl\s+(--user\s+)?enable\b|\blaunchctl\s+(load|bootstrap|submit)\b|(>>?|tee|cp\s+\S+|open\s*\()\s*[\x22']?\S*(Library/LaunchAgents|Library/LaunchDaemons|/etc/systemd/system|\.config/systemd/user)/|\bschtasks(\.exe)?\s+/create\b|CurrentVersion\\Run\b|\bupdate-rc\.d\s+\S+\s+defaults|make\s+login\s+item",
        needs: None,
        unless: None,
        unless_before: None,
        what: "it installs a service, launch agent, scheduled task or autorun entry",
        scope: Scope::Scripts,
        role: A,
    },
    Pat {
        triggers: &["authorized_keys"],
        re: r"(>>|tee\s+-a)\s*[\x22']?\S*\.ssh/authorized_keys|open\s*\([^\n]*authorized_keys[\x22'][^\n]*[\x22']a[\x22']",
        needs: None,
        unless: None,
        unless_before: None,
        what: "it adds a key to `authorized_keys` (remote access that outlives the task)",
        scope: Scope::Code,
        role: A,
    },
];
