
/// Recognises machine code and scripts from a file's first bytes (the `executable-code` rule).
public enum ExecutableFormat: String, Sendable, Codable {
    case machO = "Mach-O"
    case universalMachO = "universal Mach-O"
    case elf = "ELF"
    case pe = "PE (Windows)"
    case arArchive = "ar static library"
    case script = "script (#!)"

    /// What the file is, in words that fit "this file is …".
    public var phrase: String {
        switch self {
        case .machO: return "Mach-O machine code"
        case .universalMachO: return "a universal Mach-O binary"
        case .elf: return "ELF machine code"
        case .pe: return "a Windows (PE) executable"
        case .arArchive: return "an ar static library"
        case .script: return "a script (it starts with #!)"
        }
    }

    /// How many leading bytes `detect` looks at: enough to reach a PE header at any usual offset.
    public static let headBytes = 64 * 1024

    /// The format of a file whose data starts with `head`, or nil for plain content.
    public static func detect(_ head: UnsafeRawBufferPointer) -> ExecutableFormat? {
        guard head.count >= 2 else { return nil }
        if head[0] == UInt8(ascii: "#"), head[1] == UInt8(ascii: "!") { return .script }
        if head.count >= 4 {
            let be = UInt32(head[0]) << 24 | UInt32(head[1]) << 16 | UInt32(head[2]) << 8 | UInt32(head[3])
            switch be {
            case 0xFEEDFACE, 0xFEEDFACF, 0xCEFAEDFE, 0xCFFAEDFE: return .machO
            case 0x7F454C46: return .elf
            case 0xCAFEBABE:
                // Java class files share this magic; they carry a version (≥ 45) where a
                // universal binary carries its small architecture count.
                if head.count >= 8 {
                    let count = UInt32(head[4]) << 24 | UInt32(head[5]) << 16 | UInt32(head[6]) << 8 | UInt32(head[7])
                    if (1...30).contains(count) { return .universalMachO }
                }
            case 0xCAFEBABF:
                // 64-bit universal header, same architecture-count test.
                if head.count >= 8 {
                    let count = UInt32(head[4]) << 24 | UInt32(head[5]) << 16 | UInt32(head[6]) << 8 | UInt32(head[7])
                    if (1...30).contains(count) { return .universalMachO }
                }
            default: break
            }
        }
        if head.count >= 8, Array(head[0..<8]) == Array("!<arch>\n".utf8) { return .arArchive }
        if head[0] == UInt8(ascii: "M"), head[1] == UInt8(ascii: "Z"), head.count >= 0x40 {
            let offset = Int(head[0x3C]) | Int(head[0x3D]) << 8 | Int(head[0x3E]) << 16 | Int(head[0x3F]) << 24
            if offset >= 0x40, offset + 4 <= head.count,
               head[offset] == UInt8(ascii: "P"), head[offset + 1] == UInt8(ascii: "E"),
               head[offset + 2] == 0, head[offset + 3] == 0 {
                return .pe
            }
        }
        return nil
    }

    /// The same test on an array.
    public static func detect(_ head: [UInt8]) -> ExecutableFormat? {
        head.withUnsafeBytes { detect($0) }
    }
}
