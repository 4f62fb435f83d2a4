
/// A xar table of contents kept for reading the heap: one fixed-size record per `<file>`, with
/// names (not full paths), link targets and digests packed into one byte arena, which so never
/// outgrows the TOC. A 100,000-file package costs
/// about 10 MB here, where libarchive keeps several times that in strings and XML.
package struct XarEntryTable: Sendable {
    /// One `<file>`, in document order. Arena positions are 32-bit: a TOC is at most 512 MB.
    package struct Record: Sendable {
        /// -1 when the TOC does not say.
        package var size: Int64
        package var length: Int64
        package var offset: Int64
        /// The `<name>` alone: a path is its parents' names and this one.
        var nameStart: UInt32
        var nameCount: UInt32
        /// The parent's index, or -1 at the top.
        package var parent: Int32
        var linkStart: UInt32
        /// -1 for no link.
        var linkCount: Int32
        /// The archived digest then the extracted one, decoded from hex.
        var digestStart: UInt32
        var archivedCount: UInt8
        var extractedCount: UInt8
        package var mode: UInt16
        package var kind: EntryKind
        package var archivedStyle: XarChecksumStyle
        package var extractedStyle: XarChecksumStyle
        /// Whether the TOC gives `<data>` at all.
        package var hasData: Bool
        package var gzip: Bool
        /// Where the `<file>` stands in document order.
        package var order: Int32
    }

    package private(set) var records: [Record] = []
    package private(set) var arena: [UInt8] = []
    /// The chunk tables of the files that have one, by their record's `order`.
    package private(set) var chunkTables: [Int32: ChunkTable] = [:]
    /// Why libarchive must read this package instead (an encoding, checksum or entry type
    /// pkgtool does not read itself), or nil.
    package private(set) var needsLibArchive: String?

    package init(records: [Record] = [], arena: [UInt8] = [], chunkTables: [Int32: ChunkTable] = [:], needsLibArchive: String? = nil) {
        self.records = records
        self.arena = arena
        self.chunkTables = chunkTables
        self.needsLibArchive = needsLibArchive
    }

    /// Adds `entry` (handed over in any order; `finish` puts records in document order).
    package mutating func add(_ entry: XarTableOfContents.Entry) {
        // Hard links and unknown types are libarchive's to resolve.
        let kind = EntryKind(knownXarType: entry.type) ?? .hardlink
        if kind == .hardlink { needsLibArchive = needsLibArchive ?? "entry type \(entry.type)" }
        var gzip = false
        switch entry.encoding ?? "application/octet-stream" {
        case "application/octet-stream": break
        case "application/x-gzip": gzip = true
        case let other: if entry.length ?? 0 > 0 { needsLibArchive = needsLibArchive ?? "encoding \(other)" }
        }
        let archivedStyle = XarChecksumStyle(name: entry.archivedChecksum == nil ? nil : entry.archivedStyle)
        let extractedStyle = XarChecksumStyle(name: entry.extractedChecksum == nil ? nil : entry.extractedStyle)
        if archivedStyle == nil || extractedStyle == nil { needsLibArchive = needsLibArchive ?? "a file checksum style other than sha1 or md5" }
        if kind == .file, let chunks = entry.chunks { chunkTables[Int32(truncatingIfNeeded: entry.order)] = chunks }
        let nameStart = UInt32(arena.count)
        arena += entry.name
        let linkStart = UInt32(arena.count)
        if let link = entry.linkTarget { arena += link }
        let digestStart = UInt32(arena.count)
        let archived = Self.appendHex(archivedStyle == XarChecksumStyle.none ? nil : entry.archivedChecksum, to: &arena)
        let extracted = Self.appendHex(extractedStyle == XarChecksumStyle.none ? nil : entry.extractedChecksum, to: &arena)
        records.append(Record(size: entry.size ?? -1, length: entry.length ?? -1, offset: entry.offset ?? -1,
                              nameStart: nameStart, nameCount: UInt32(entry.name.count), parent: Int32(truncatingIfNeeded: entry.parent),
                              linkStart: linkStart, linkCount: Int32(entry.linkTarget?.count ?? -1),
                              digestStart: digestStart, archivedCount: archived, extractedCount: extracted,
                              mode: UInt16((entry.mode ?? 0) & 0o7777), kind: kind,
                              archivedStyle: archivedStyle ?? .none, extractedStyle: extractedStyle ?? .none,
                              hasData: entry.length != nil || entry.offset != nil, gzip: gzip,
                              order: Int32(truncatingIfNeeded: entry.order)))
    }

    /// Puts the records in document order (folders before their contents). Records arrive as
    /// their `<file>` closes, which puts a folder after its contents; they are moved in place,
    /// so the table never exists twice.
    package mutating func finish() {
        inPlace: for start in records.indices {
            // Follow the cycle through `start`: each record goes to the slot its order names.
            while Int(records[start].order) != start {
                let target = Int(records[start].order)
                guard target >= 0, target < records.count, Int(records[target].order) != target else {
                    sortByOrder()
                    break inPlace
                }
                records.swapAt(start, target)
            }
        }
        // Growing by doubling leaves up to half of each array unused for the whole read.
        records = records.withUnsafeBufferPointer { Array($0) }
        arena = arena.withUnsafeBufferPointer { Array($0) }
    }

    /// The fallback when orders are not exactly 0..<count (a TOC cut short at the entry limit).
    private mutating func sortByOrder() { records.sort { $0.order < $1.order } }

    /// The memory the records and the arena take.
    package var byteCount: Int { records.count * MemoryLayout<Record>.stride + arena.count }

    /// The full path of the record at `index`, or nil when it passes `limit` bytes.
    package func path(at index: Int, limit: Int) -> [UInt8]? {
        var names: [Range<Int>] = []
        var length = -1
        var current = index
        while current >= 0 && current < records.count {
            let record = records[current]
            let start = Int(record.nameStart)
            names.append(start..<start + Int(record.nameCount))
            length += Int(record.nameCount) + 1
            if length > limit { return nil }
            // Parents come first in document order: a parent index not below is hostile.
            guard Int(record.parent) < current else { break }
            current = Int(record.parent)
        }
        var path: [UInt8] = []
        path.reserveCapacity(max(length, 0))
        for range in names.reversed() {
            if !path.isEmpty { path.append(UInt8(ascii: "/")) }
            path += arena[range]
        }
        return path
    }

    /// The chunk table of a record's file, when the TOC gives one that fits it.
    package func chunks(_ record: Record) -> ChunkTable? { chunkTables.isEmpty ? nil : chunkTables[record.order] }

    /// The `<name>` of a record alone.
    package func name(_ record: Record) -> ArraySlice<UInt8> {
        arena[Int(record.nameStart)..<Int(record.nameStart) + Int(record.nameCount)]
    }

    package func link(_ record: Record) -> [UInt8]? {
        record.linkCount < 0 ? nil : Array(arena[Int(record.linkStart)..<Int(record.linkStart) + Int(record.linkCount)])
    }

    package func archivedDigest(_ record: Record) -> ArraySlice<UInt8> {
        arena[Int(record.digestStart)..<Int(record.digestStart) + Int(record.archivedCount)]
    }

    package func extractedDigest(_ record: Record) -> ArraySlice<UInt8> {
        let start = Int(record.digestStart) + Int(record.archivedCount)
        return arena[start..<start + Int(record.extractedCount)]
    }

    /// Appends the bytes of a hex digest and returns how many; a digest that is not hex (or
    /// longer than any xar style) becomes one zero byte, which matches no data, so the file
    /// reads as damaged.
    private static func appendHex(_ text: String?, to arena: inout [UInt8]) -> UInt8 {
        guard var text else { return 0 }
        // Decoded into a buffer of its own and appended at once (byte by byte, the arena's
        // appends would cost more than parsing the rest of the entry), and without a branch per
        // digit: hex digits are random, so such branches are mispredicted half the time.
        let valid = text.withUTF8 { hex -> Bool in
            guard hex.count % 2 == 0, hex.count <= 128 else { return false }
            var invalid = 0
            func nibble(_ character: UInt8) -> UInt8 {
                // Each is negative exactly when the character is outside its range ('0'-'9',
                // 'a'-'f' either case); both negative makes the digest invalid.
                let digit = (Int(character) - 0x30) | (0x39 - Int(character))
                let letter = (Int(character | 0x20) - 0x61) | (0x66 - Int(character | 0x20))
                invalid |= (digit & letter) >> 63 & 1
                // '0'-'9' have bit 6 clear, letters set: digits keep their low bits, letters add 9.
                return character & 0x0F &+ 9 &* (character >> 6)
            }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { bytes -> Bool in
                var index = 0
                while index < hex.count {
                    bytes[index / 2] = nibble(hex[index]) << 4 | nibble(hex[index + 1])
                    index += 2
                }
                guard invalid == 0 else { return false }
                arena.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[0..<index / 2]))
                return true
            }
        }
        guard valid else {
            arena.append(0)
            return 1
        }
        return UInt8(text.utf8.count / 2)
    }
}
