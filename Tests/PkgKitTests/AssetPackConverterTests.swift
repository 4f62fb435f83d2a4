import Foundation
import Synchronization
import Testing
import TestSupport
@testable import PkgKit

/// The converter as a library: manifest bytes, pack IDs, and an interrupted conversion.
@Suite struct AssetPackConverterTests {
    @Test func packIDs() {
        #expect(AssetPackID.make(fromProductIdentifier: "com.example.book.chapter1") == "com-example-book-chapter1")
        #expect(AssetPackID.make(fromProductIdentifier: "com.example.my_book__2") == "com-example-my-book--2")
        #expect(AssetPackID.make(fromProductIdentifier: "Plain") == "Plain")
    }

    /// The exact bytes: keys in §8's order, two-space indentation, a final newline.
    @Test func manifestBytes() {
        let onDemand = AssetPackManifest(assetPackID: "com-example-book").jsonText()
        #expect(onDemand == """
            {
              "assetPackID": "com-example-book",
              "downloadPolicy": {
                "onDemand": {}
              },
              "fileSelectors": [
                {
                  "directory": "com-example-book"
                }
              ],
              "platforms": [
                "iOS"
              ]
            }

            """)
        let prefetch = AssetPackManifest(assetPackID: "x", downloadPolicy: .prefetch, platforms: [.iOS, .macOS]).jsonText()
        #expect(prefetch.contains("""
              "downloadPolicy": {
                "prefetch": {
                  "installationEventTypes": [
                    "firstInstallation",
                    "subsequentUpdate"
                  ]
                }
              },
            """))
        #expect(prefetch.contains("\"platforms\": [\n    \"iOS\",\n    \"macOS\"\n  ]"))
        for text in [onDemand, prefetch] {
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil, "not JSON:\n\(text)")
        }
    }

    @Test func platformNamesAndOrder() {
        #expect(AssetPackPlatform(name: "IOS") == .iOS)
        #expect(AssetPackPlatform(name: "visionos") == .visionOS)
        #expect(AssetPackPlatform(name: "watchOS") == nil)
        #expect(AssetPackPlatform.canonical([.visionOS, .iOS, .visionOS]) == [.iOS, .visionOS])
        #expect(ConvertOptions(platforms: []).manifestPlatforms == [.iOS])
    }

    /// Cancelled in the middle of staging a pack: nothing in the output folder changes and
    /// nothing staged is left.
    @Test func cancelledWhileStagingChangesNothing() throws {
        let s = try Scratch()
        let source = try s.content("src", id: "com.example.book", version: "2.0", files: ["a.txt": "two", "b.txt": "two"])
        try s.write("out/com-example-book/Contents/a.txt", "one")
        try s.write("out/com-example-book.json", "{}")
        let before = snapshot(s.path("out"))
        let cancellation = Cancellation()
        let progressCalls = Atomic<Int>(0)
        // Set part-way through the full pass, from its progress: the next check stops the read.
        let options = ConvertOptions(progress: { _, _ in
            if progressCalls.add(1, ordering: .relaxed).newValue == 1 { cancellation.cancel() }
        }, cancellation: cancellation)
        #expect(throws: OperationCancelled.self) {
            try AssetPackConverter(output: s.path("out")).convert([source], options: options)
        }
        #expect(progressCalls.load(ordering: .relaxed) >= 1)
        #expect(snapshot(s.path("out")) == before)
    }

    /// The report's table lines up its columns.
    @Test func tableColumns() {
        let pack = { (id: String, version: String) in
            ConvertedPack(productIdentifier: id, contentVersion: version, assetPackID: AssetPackID.make(fromProductIdentifier: id),
                          manifest: "", directory: "", package: "")
        }
        let report = ConvertReport(status: .converted, packs: [pack("com.a", "1.0"), pack("com.example.long", "10.2.3")])
        #expect(report.table == [
            "product           version  asset pack ID",
            "com.a             1.0      com-a",
            "com.example.long  10.2.3   com-example-long",
        ])
        #expect(report.commands == ["xcrun ba-package com-a.json -o com-a.aar",
                                    "xcrun ba-package com-example-long.json -o com-example-long.aar"])
    }
}
