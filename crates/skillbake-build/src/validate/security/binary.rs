//! `binary-payload`: files a reviewer cannot read where a pack should hold text: compiled
//! Python (`.pyc`), executables and shared libraries (ELF, PE, Mach-O, by their first bytes
//! whatever the name), archives (zip, tar, gzip, 7z, rar, xz, bzip2) and Office files that can
//! carry macros (`.docm`, `.xlsm`, `.pptm`, legacy OLE documents, or any Office file holding
//! `vbaProject.bin`). Images, fonts, PDFs and macro-free Office documents are not reported.

use super::scan::Hit;
use crate::diagnostic::Code;

fn ext(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default()
}

/// What a binary file is, when it is one this rule reports.
pub fn classify(path: &str, bytes: &[u8]) -> Option<&'static str> {
    let e = ext(path);
    let magic = |m: &[u8]| bytes.starts_with(m);
    if magic(b"\x7fELF") {
        return Some("an ELF executable or shared library");
    }
    if magic(b"MZ")
        && matches!(
            e.as_str(),
            "exe" | "dll" | "scr" | "sys" | "com" | "cpl" | ""
        )
    {
        return Some("a Windows executable");
    }
    if magic(&[0xCF, 0xFA, 0xED, 0xFE])
        || magic(&[0xCE, 0xFA, 0xED, 0xFE])
        || (magic(&[0xCA, 0xFE, 0xBA, 0xBE]) && e != "class")
    {
        return Some("a Mach-O executable or library");
    }
    if matches!(e.as_str(), "pyc" | "pyo")
        || (bytes.len() >= 16
            && bytes[2..4] == [0x0D, 0x0A]
            && e.is_empty()
            && bytes[0] > 0
            && bytes[1] == 0x0D)
    {
        return Some("compiled Python bytecode");
    }
    if matches!(
        e.as_str(),
        "so" | "dylib" | "dll" | "exe" | "node" | "msi" | "scr"
    ) {
        return Some("an executable or shared library");
    }
    if matches!(
        e.as_str(),
        "docm" | "dotm" | "xlsm" | "xltm" | "xlam" | "pptm" | "potm" | "ppam" | "sldm"
    ) {
        return Some("an Office file with macros enabled");
    }
    if magic(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) {
        return Some("a legacy Office (OLE) document, which can carry macros");
    }
    if magic(b"PK\x03\x04") {
        if memchr::memmem::find(bytes, b"vbaProject.bin").is_some() {
            return Some("an Office file holding a macro project (`vbaProject.bin`)");
        }
        let office = matches!(
            e.as_str(),
            "docx"
                | "xlsx"
                | "pptx"
                | "odt"
                | "ods"
                | "odp"
                | "dotx"
                | "potx"
                | "xltx"
                | "vsdx"
                | "epub"
                | "whl"
                | "jar"
                | "apk"
                | "nupkg"
                | "vsix"
                | "crx"
                | "xpi"
                | "ipynb"
                | "skill"
        );
        if !office {
            return Some("a zip archive");
        }
        if matches!(
            e.as_str(),
            "whl" | "jar" | "apk" | "nupkg" | "vsix" | "crx" | "xpi"
        ) {
            return Some("a packaged program (an archive of code)");
        }
        return None;
    }
    if magic(&[0x1F, 0x8B])
        || magic(b"7z\xBC\xAF\x27\x1C")
        || magic(b"Rar!\x1A\x07")
        || magic(&[0xFD, b'7', b'z', b'X', b'Z', 0])
        || magic(b"BZh")
        || (bytes.len() > 262 && &bytes[257..262] == b"ustar")
    {
        return Some("a compressed archive");
    }
    None
}

/// Checks a file that is not text.
pub fn check_file(path: &str, bytes: &[u8], hits: &mut Vec<Hit>) {
    if let Some(what) = classify(path, bytes) {
        hits.push(Hit::at(Code::BinaryPayload, what, path, b"", 0, 0));
    }
}
