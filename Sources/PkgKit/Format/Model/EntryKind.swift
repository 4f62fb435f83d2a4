
/// What an archive or folder entry is.
public enum EntryKind: String, Codable, Sendable {
    case file
    case directory
    case symlink
    case hardlink
    case characterDevice = "character-device"
    case blockDevice = "block-device"
    case fifo
    case socket

    /// The kind a xar TOC's `<type>` names (unknown types read as files, as libarchive does).
    public init(xarType: String) {
        self = EntryKind(knownXarType: xarType) ?? .file
    }

    /// The kind a xar TOC's `<type>` names, or nil for a type xar does not define.
    public init?(knownXarType: String) {
        switch knownXarType {
        case "file": self = .file
        case "directory": self = .directory
        case "symlink": self = .symlink
        case "hardlink": self = .hardlink
        case "fifo": self = .fifo
        case "character special": self = .characterDevice
        case "block special": self = .blockDevice
        case "socket": self = .socket
        default: return nil
        }
    }

    /// Devices, FIFOs and sockets: never allowed in a package.
    public var isSpecial: Bool {
        switch self {
        case .characterDevice, .blockDevice, .fifo, .socket: return true
        default: return false
        }
    }
}
