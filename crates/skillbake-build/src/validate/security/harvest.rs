//! `credential-harvest`: reading secrets and sending data off the machine. A secret read (SSH
//! and cloud keys, browser profiles and cookies, keychains, wallets, `.env` files, the whole
//! environment) is reported only when the same pack also sends data out (a POST, an upload, a
//! raw socket, a DNS lookup of a computed name), wherever in the pack the two halves are; a
//! known collection endpoint (request bins, out-of-band interaction services) and sending a
//! `.env` file are reported on their own. An endpoint counts where it is used: a URL, a host
//! with a path, or a host on a line that requests or looks it up; its bare name in a list of
//! what a scanner looks for (`'webhook.site',`, `requestbin|ngrok`) is not a send.
//!
//! What a line does after a read can make it not one: a public key (`id_rsa.pub`) is not a
//! secret, and an environment read filtered on the spot (`printenv | grep GROQ`, `for k, v in
//! os.environ.items() if k in ALLOWED`, `Object.keys(process.env).filter(…)`) picks variables
//! rather than dumping them ([`super::scan::Pat::unless`]). Backticks around `env` are command
//! substitution only in scripts; in Markdown they are inline code naming the command.

use super::scan::{Hit, Pat, Role, Scope};
use crate::diagnostic::Code;

const SECRET: Role = Role::Secret;
const SEND: Role = Role::Send;

/// The hosts of the collection endpoints (request bins, out-of-band interaction services), as
/// one alternation: the endpoint pattern's three forms (a URL, a host with a path, a host on a
/// line that requests it) share it.
macro_rules! collection_hosts {
    () => {
        r"webhook\.site|([\w-]+\.)?requestbin\.(com|net|io)|[\w-]+\.m\.pipedream\.net|[\w-]+\.burpcollaborator\.net|[\w-]+\.oast\.(pro|live|site|online|fun|me)|[\w-]+\.interact\.sh|[\w-]+\.interactsh\.com|requestcatcher\.com|beeceptor\.com|canarytokens\.com|hookbin\.com"
    };
}

/// The code these patterns raise.
pub const CODE: Code = Code::CredentialHarvest;

/// The patterns.
pub const PATTERNS: &[Pat] = &[
    Pat {
        triggers: &[".ssh/id_", "id_rsa", "id_ed25519", "id_ecdsa", ".ssh/"],
        re: r"(~|\$HOME|\$\{HOME\}|home|expanduser\s*\(\s*[\x22']~|homedir\(\)|home\(\))[^\n]{0,12}\.ssh/(id_\w+|\*|[\x22'`\s]|$)|\bid_(rsa|ed25519|ecdsa|dsa)([^.\w]|$)",
        needs: None,
        unless: Some(r"^\.pub\b"),
        unless_before: Some(
            r"(identityfile|\bssh\s+(-\w+\s+)*-i|\bscp\s+(-\w+\s+)*-i|ssh-copy-id\s+(-\w+\s+)*-i|ssh-keygen\b[^\n]*\s-f|ssh-add|chmod\s+[0-7]{3,4}|key_?path\W{0,3}(default\W{0,3})?)\s*[\x22'`=:]?\s*$",
        ),
        what: "it reads SSH private keys",
        scope: Scope::Code,
        role: SECRET,
    },
    Pat {
        triggers: &[".aws/credentials", ".aws/config", ".azure/", "gcloud/", "application_default_credentials", ".kube/config", ".docker/config.json", ".netrc", ".npmrc", ".pypirc", ".git-credentials", ".config/gh/hosts"],
        re: r"\.aws/credentials|\.azure/(accessTokens|msal_token_cache|azureProfile)|\.config/gcloud/|application_default_credentials\.json|\.kube/config|\.docker/config\.json|\.netrc\b|\.git-credentials|\.config/gh/hosts\.yml|\.pypirc|\.npmrc",
        needs: None,
        unless: None,
        unless_before: None,
        what: "it reads cloud or developer credentials",
        scope: Scope::Code,
        role: SECRET,
    },
    Pat {
        triggers: &["login data", "cookies", "key4.db", "logins.json", "local state", "web data", "user data"],
        re: r"(Chrome|Chromium|Edge|Brave|Opera|Vivaldi|Firefox|Mozilla|User Data|Profiles?)[^\n]{0,60}((?-i:Login Data|Cookies|Local State|Web Data)|key4\.db|logins\.json|cookies\.sqlite)|\b((?-i:Login Data)|key4\.db|logins\.json|cookies\.sqlite)\b",
        needs: Some(r"Chrome|Chromium|Edge|Brave|Opera|Vivaldi|Firefox|Mozilla|User Data|Profile|Login Data|key4\.db|logins\.json|cookies\.sqlite"),
        unless: None,
        unless_before: None,
        what: "it reads browser passwords or cookies",
        scope: Scope::Code,
        role: SECRET,
    },
    Pat {
        triggers: &["keychain", "find-generic-password", "find-internet-password", "secret-tool", "credential manager", "cmdkey", "vaultcmd", "lsass", "mimikatz"],
        re: r"\bsecurity\s+find-(generic|internet)-password\b[^\n]*(Safe Storage|Chrome|Chromium|Brave|Edge|Opera|Slack|Discord)|\bdump-keychain\b|Library/Keychains/|login\.keychain|\bsecret-tool\s+lookup\b|\bvaultcmd\b|\bcmdkey\s+/list\b|\blsass\b|\bmimikatz\b",
        needs: None,
        unless: None,
        unless_before: None,
        what: "it reads the system keychain",
        scope: Scope::Code,
        role: SECRET,
    },
    Pat {
        triggers: &["wallet", "metamask", "exodus", "electrum", "phantom", "keystore"],
        re: r"\bwallet\.dat\b|(MetaMask|Exodus|Electrum|Phantom|Atomic)[^\n]{0,40}(Local Extension Settings|wallets?[/\\]|\.wallet\b|\.json|\bdata\b|keystore)|nkbihfbeogaeaoehlefnkodbefgpgknn|/keystore/UTC--",
        needs: None,
        unless: None,
        unless_before: None,
        what: "it reads cryptocurrency wallets",
        scope: Scope::Code,
        role: SECRET,
    },
    Pat {
        triggers: &["os.environ", "process.env", "printenv", "env |", "environ.items", "getenv()", "set |", "get-childitem env:", "/proc/self/environ", "export -p"],
        re: r"(json\.dumps|str|dict|repr|json\.dump|pickle\.dumps)\s*\(\s*(dict\s*\(\s*)?os\.environ\s*\)|\bfor\s+\w+\s*,\s*\w+\s+in\s+os\.environ\.items\s*\(\)|JSON\.stringify\s*\(\s*process\.env\s*\)|Object\.(entries|keys)\s*\(\s*process\.env\s*\)|^\s*(printenv|env|set|export\s+-p)\s*(\||>)|\$\(\s*(printenv|env)\s*\)|/proc/self/environ|Get-ChildItem\s+env:",
        needs: Some(
            r"os\.environ\s*\)|os\.environ\.items|process\.env\s*\)|(printenv|env|set|export\s+-p)\s*[|>]|\$\(\s*(printenv|env)|/proc/self/environ|Get-ChildItem",
        ),
        unless: Some(
            r"^\s*(grep|egrep|fgrep|rg|findstr|select-string)\b|^\s*\.(filter|some|find|every|includes)\s*\(|^\s*if\b",
        ),
        unless_before: None,
        what: "it dumps the whole environment (where API keys and tokens live)",
        scope: Scope::Code,
        role: SECRET,
    },
    Pat {
        triggers: &["`printenv", "`env", "` printenv", "` env"],
        re: r"`\s*(printenv|env)\s*`",
        needs: None,
        unless: None,
        unless_before: None,
        what: "it dumps the whole environment (where API keys and tokens live)",
        scope: Scope::Scripts,
        role: SECRET,
    },
    Pat {
        triggers: &[".env"],
        re: r"(\s-d\s*@|--data(-binary|-raw)?[\s=]+@|\s-F\s*[\x22']?\w+=@|\s-T\s+|--upload-file\s+)[\x22']?[^\s\x22']*\.env\b|\bcat\s+[^\n|]*\.env\b[^\n|]*\|\s*(curl|wget|nc|ncat)\b",
        needs: Some(r"@|\s-T\s|--upload-file\s|cat\s"),
        unless: None,
        unless_before: None,
        what: "it sends a `.env` file (where API keys live) over the network",
        scope: Scope::Code,
        role: Role::Alone,
    },
    Pat {
        triggers: &["curl", "wget"],
        re: r"\b(curl|wget)\b[^\n]*(\s-d\s*@|\s--data(-binary|-raw|-urlencode)?[\s=]+[\x22']?@|\s-F\s*[\x22']?\w+=@|\s--post-file[\s=]|\s-T\s|\s--upload-file\s|\s-d\s*[\x22']?\$|\s--data[\s=]+[\x22']?\$|\s-X\s*POST\b)",
        needs: Some(r"\s-[-dFTX]"),
        unless: None,
        unless_before: None,
        what: "it posts data to a URL",
        scope: Scope::Code,
        role: SEND,
    },
    Pat {
        triggers: &["requests.post", "requests.put", "httpx.post", "urlopen", "fetch(", "axios.post", "http.request", "https.request", "sendall", "socket.connect", ".connect((", "smtplib", "ftplib", "paramiko", "invoke-webrequest", "invoke-restmethod", "uploadfile", "uploadstring"],
        re: r"\b(requests|httpx|session|client)\.(post|put|patch)\s*\(|\burlopen\s*\([^\n,()]+,\s*(data\s*=\s*)?\w|\bfetch\s*\([^\n]*method\s*:\s*[\x22'](POST|PUT)|\baxios\.(post|put)\s*\(|\bhttps?\.request\s*\(|\.sendall\s*\(|\.connect\s*\(\s*\(|\bsmtplib\.SMTP|\bftplib\.FTP|\bparamiko\.|\b(invoke-webrequest|invoke-restmethod|iwr|irm)\b[^\n]*-Method\s+(Post|Put)|\bUpload(File|String|Data)\s*\(",
        needs: Some(r"(requests|httpx|session|client)\.(post|put|patch)|urlopen|method|axios\.(post|put)|https?\.request|\.sendall|\.connect\s*\(\s*\(|smtplib\.SMTP|ftplib\.FTP|paramiko\.|Upload(File|String|Data)"),
        unless: None,
        unless_before: None,
        what: "it sends data over the network",
        scope: Scope::Scripts,
        role: SEND,
    },
    Pat {
        triggers: &["nslookup", "dig ", "host ", "/dev/tcp/", "/dev/udp/", "nc ", "ncat", "socat", "gethostbyname"],
        re: r"\b(nslookup|dig|host)\s+[^\n]*(\$\(|`|\$\{?\w+\}?\.)|/dev/(tcp|udp)/|\b(nc|ncat|netcat)\s+(-\w+\s+)*\S+\s+\d{2,5}\s*<|\|\s*(nc|ncat|netcat|socat)\s|gethostbyname\s*\([^\n]*(\+|\bf[\x22']|format|%)",
        needs: Some(
            r"(nslookup|dig|host)\s[^\n]*[$`]|/dev/(tcp|udp)/|(nc|ncat|netcat)\s[^\n]*<|\|\s*(nc|ncat|netcat|socat)\s|gethostbyname",
        ),
        unless: None,
        unless_before: None,
        what: "it sends data over a raw socket or DNS",
        scope: Scope::Code,
        role: SEND,
    },
    Pat {
        triggers: &["webhook.site", "requestbin", "pipedream.net", "burpcollaborator", "oast.", "interact.sh", "interactsh", "requestcatcher", "beeceptor", "canarytokens", "hookbin"],
        re: concat!(
            r"(https?:)?//([\w-]+\.)*(",
            collection_hosts!(),
            r")\b|\b(",
            collection_hosts!(),
            r")/[\w?#=-]|\b(curl|wget|nslookup|dig|host|ping|fetch|axios|requests|httpx|urlopen|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n]*\b(",
            collection_hosts!(),
            r")\b"
        ),
        needs: None,
        unless: None,
        unless_before: None,
        what: "it sends data to a collection endpoint (a request bin or out-of-band interaction service)",
        scope: Scope::Code,
        role: Role::Alone,
    },
    Pat {
        triggers: &["discord.com/api/webhooks", "discordapp.com/api/webhooks", "api.telegram.org/bot", "hooks.slack.com/services", "pastebin.com/api", "transfer.sh", "0x0.st", "file.io", "ngrok"],
        re: r"discord(app)?\.com/api/webhooks/|api\.telegram\.org/bot|hooks\.slack\.com/services/|pastebin\.com/api|transfer\.sh|https?://0x0\.st|https?://file\.io|[\w-]+\.ngrok(-free)?\.(io|app|dev)",
        needs: None,
        unless: None,
        unless_before: None,
        what: "it sends data to a chat webhook, paste or drop site",
        scope: Scope::Code,
        role: SEND,
    },
];

/// Pairs the halves of `credential-harvest` in one pack: each secret read becomes a finding when
/// the pack also sends data (naming where); a collection endpoint is a finding on its own; other
/// hits pass through.
pub fn pair(hits: Vec<Hit>) -> Vec<Hit> {
    let send = hits
        .iter()
        .find(|h| h.code == Code::CredentialHarvest && h.role == Role::Send)
        .map(|h| format!("{}:{}:{}", h.path, h.pos.line, h.pos.column));
    let mut out = Vec::with_capacity(hits.len());
    for mut h in hits {
        if h.code != Code::CredentialHarvest {
            out.push(h);
            continue;
        }
        match h.role {
            Role::Secret => {
                if let Some(s) = &send {
                    h.also = Some(format!("and the pack sends data out at {s}"));
                    out.push(h);
                }
            }
            Role::Alone => out.push(h),
            Role::Send => {}
        }
    }
    out
}
