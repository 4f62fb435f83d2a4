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

    /// Devices, FIFOs and sockets: never allowed in a package.
    public var isSpecial: Bool {
        switch self {
        case .characterDevice, .blockDevice, .fifo, .socket: return true
        default: return false
        }
    }
}
