//! `agent-hijack`: text that tries to take the agent over: telling it to ignore or override its
//! instructions, posing as a system or developer message, telling it to hide things from the
//! user, or to switch off confirmations and safety checks. English and Chinese.

use super::scan::{Pat, Role, Scope};
use crate::diagnostic::Code;

const A: Role = Role::Alone;

/// The code these patterns raise.
pub const CODE: Code = Code::AgentHijack;

/// The patterns.
pub const PATTERNS: &[Pat] = &[
    Pat {
        triggers: &["ignore", "disregard", "forget", "override"],
        re: r"(^|[.!?:;>*\-(\[]\s*|\b(please|now|must|should|always|then|and|you)\s+)(ignore|disregard|forget|override)\s+(all\s+|any\s+|of\s+)*(the\s+|your\s+|its\s+)?(previous|prior|above|earlier|preceding|system|original|existing|safety|developer|initial)\b[^.\n]{0,30}\b(instructions?|directives?|rules|guidelines|prompts?|guardrails|policies|restrictions)\b",
        what: "it tells the agent to ignore its instructions",
        scope: Scope::Any,
        role: A,
    },
    Pat {
        triggers: &[
            "<|im_start|>",
            "<|system|>",
            "[system]",
            "<system>",
            "system message",
            "developer message",
            "system prompt",
            "developer prompt",
        ],
        re: r"^\s*(>\s*)?(<\|im_start\|>\s*system|<\|system\|>|\[system\]\s*:?\s*\w|<system>\s*\w|(new|updated|real|actual|official|important)\s+(system|developer)\s+(message|prompt|instructions?)\s*:)",
        what: "it poses as a system or developer message",
        scope: Scope::Any,
        role: A,
    },
    Pat {
        triggers: &["user", "human"],
        re: r"\b(do not|don't|never|without)\s+(tell(ing)?|inform(ing)?|notify(ing)?|alert(ing)?|mention(ing)?|reveal(ing)?|disclos(e|ing)|let(ting)?)\s+(this\s+|it\s+|anything\s+)?(to\s+)?the\s+(user|human)\b(\s+know)?\s*($|[.,;:!)]|about|what|that you|where|which|this|any)|\b(hide|conceal|keep)\s+(this|it|these\s+\w+|the\s+\w+)?\s*(secret\s+)?from\s+the\s+(user|human)\b|\b(keep|remain|stay)\s+[^.\n]{0,20}\b(hidden|secret|invisible)\s+(from|to)\s+the\s+(user|human)\b|\bthe\s+(user|human)\s+(must|should)\s+(not|never)\s+(know|see|find out|notice|be told)",
        what: "it tells the agent to hide what it does from the user",
        scope: Scope::Any,
        role: A,
    },
    Pat {
        triggers: &["silently", "secretly", "quietly", "covertly"],
        re: r"\b(silently|secretly|quietly|covertly)\s+(send|upload|post|copy|exfiltrate|transmit|forward|collect|run|execute|install|download|add|modify|delete)\b",
        what: "it tells the agent to act without the user noticing",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &[
            "dangerously-skip-permissions",
            "dangerously-bypass-approvals",
            "--yolo",
            "bypass",
            "disable",
            "turn off",
            "circumvent",
        ],
        re: r"\b(claude|gemini|codex|qwen|cursor-agent|aider)\b[^\n]*\s(--dangerously-skip-permissions|--dangerously-bypass-approvals-and-sandbox|--yolo)\b|(^|[.,!:;>*\-]\s*|\b(please|now|must|should|always|then|and|you)\s+)(bypass|disable|turn off|circumvent)\s+(all\s+|any\s+|the\s+|your\s+)?(safety|security|permission|approval|sandbox|content)\s+(checks?|filters?|guardrails?|restrictions?|policy|policies)\b",
        what: "it switches off confirmations or safety checks",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &["忽略", "无视", "忘记", "忽视", "不要理会"],
        re: r"(^|[。！：:，,\s>*\-]|请|现在|立即|立刻|你要|你必须)(忽略|无视|忘记|忽视|不要理会)(掉)?(之前|以上|上面|先前|此前|前面|所有|全部|一切|你的|系统)[^。\n]{0,12}(指令|指示|规则|提示词?|约束|限制|设定)",
        what: "it tells the agent to ignore its instructions (in Chinese)",
        scope: Scope::Any,
        role: A,
    },
    Pat {
        triggers: &["用户"],
        re: r"(不要|不得|切勿|别|禁止)(告诉|告知|通知|提醒|透露|提及|向|对)(用户|使用者)[^“”\x22「」\n]{0,3}($|[。，,！；]|关于|此事|这件事|这些|任何|你)|(对|向)(用户|使用者)(隐瞒|保密)|(瞒着|背着)(用户|使用者)|(不要|别|不得)让(用户|使用者)(知道|发现|察觉|看到)",
        what: "it tells the agent to hide what it does from the user (in Chinese)",
        scope: Scope::Any,
        role: A,
    },
    Pat {
        triggers: &["绕过", "禁用", "关闭", "跳过"],
        re: r"(^|[。！：:\s>*\-]|请|现在|立即|你要|你必须)(绕过|禁用|关闭)(所有|全部|一切)?的?(安全|权限|审批|沙箱|沙盒)(检查|限制|机制|验证|策略)",
        what: "it switches off confirmations or safety checks (in Chinese)",
        scope: Scope::Code,
        role: A,
    },
    Pat {
        triggers: &["悄悄", "偷偷", "秘密地"],
        re: r"(悄悄|偷偷|秘密地)(地)?(发送|上传|复制|收集|执行|运行|安装|下载|修改|删除)",
        what: "it tells the agent to act without the user noticing (in Chinese)",
        scope: Scope::Code,
        role: A,
    },
];
