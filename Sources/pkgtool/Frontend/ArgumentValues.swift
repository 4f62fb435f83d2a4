import ArgumentParser
import PkgKitIdentity
import PkgKit

// PkgKit's enumerations that flags take as they are: their raw values are the flags' words.
extension ContentVersion.Part: ExpressibleByArgument {}
extension CompressionMode: ExpressibleByArgument {}
extension OutputFormat: ExpressibleByArgument {}
