internal import CXML2
import Foundation

/// What an element of a xar TOC is to the parser, judged by its name and the element it sits in.
enum XarTOCElement {
    case file, name, type, mode, link, data, length, offset, size, encoding, archivedChecksum, extractedChecksum
    case checksum, checksumOffset, checksumSize, chunks, other

    /// What the element named `name` is inside `parent`.
    static func classify(_ name: UnsafePointer<xmlChar>?, inside parent: XarTOCElement?) -> XarTOCElement {
        guard let name else { return .other }
        return classify(inside: parent) {
            strcmp(UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self), UnsafeRawPointer($0.text.utf8Start).assumingMemoryBound(to: CChar.self)) == 0
        }
    }

    /// What an element whose name is `named` is, inside `parent`.
    @inline(__always)
    static func classify(inside parent: XarTOCElement?, _ named: (XarTOCName) -> Bool) -> XarTOCElement {
        if named(.file) { return .file }
        switch parent {
        case .file:
            if named(.name) { return .name }
            if named(.type) { return .type }
            if named(.mode) { return .mode }
            if named(.link) { return .link }
            if named(.data) { return .data }
            if named(.chunks) { return .chunks }
        case .data:
            if named(.length) { return .length }
            if named(.offset) { return .offset }
            if named(.size) { return .size }
            if named(.encoding) { return .encoding }
            if named(.extractedChecksum) { return .extractedChecksum }
            if named(.archivedChecksum) { return .archivedChecksum }
        case .checksum:
            if named(.offset) { return .checksumOffset }
            if named(.size) { return .checksumSize }
        default:
            if named(.checksum) { return .checksum }
        }
        return .other
    }
}

/// The element names the parser reads.
enum XarTOCName: Int, CaseIterable {
    case file, name, type, mode, link, data, length, offset, size, encoding, archivedChecksum, extractedChecksum, checksum, chunks

    package var text: StaticString {
        switch self {
        case .file: "file"
        case .name: "name"
        case .type: "type"
        case .mode: "mode"
        case .link: "link"
        case .data: "data"
        case .length: "length"
        case .offset: "offset"
        case .size: "size"
        case .encoding: "encoding"
        case .archivedChecksum: "archived-checksum"
        case .extractedChecksum: "extracted-checksum"
        case .checksum: "checksum"
        case .chunks: "chunks"
        }
    }
}

/// The element names the parser reads, as the parser's dictionary holds them. libxml2 hands SAX2
/// callbacks names from that dictionary, one copy per name, so comparing pointers tells them
/// apart without a `strcmp` per element.
struct XarTOCInternedNames {
    package let dictionary: xmlDictPtr
    package let pointers: [UnsafePointer<xmlChar>?]

    package init?(_ dictionary: xmlDictPtr?) {
        guard let dictionary else { return nil }
        self.dictionary = dictionary
        pointers = XarTOCName.allCases.map { xmlDictLookup(dictionary, $0.text.utf8Start, Int32($0.text.utf8CodeUnitCount)) }
    }

    /// What `XarTOCElement.classify` says, or nil for a name the dictionary does not hold (then
    /// it is compared by its text).
    func classify(_ element: UnsafePointer<xmlChar>?, inside parent: XarTOCElement?) -> XarTOCElement? {
        guard let element else { return .other }
        let found = XarTOCElement.classify(inside: parent) { element == pointers[$0.rawValue] }
        return found != .other || xmlDictOwns(dictionary, element) == 1 ? found : nil
    }
}
