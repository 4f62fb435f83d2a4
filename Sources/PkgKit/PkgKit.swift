// PkgKit is built as one module per layer (README.md in this folder); an app imports them all
// with `import PkgKit`.
@_exported import PkgKitSupport
@_exported import PkgKitDiagnostics
@_exported import PkgKitIdentity
@_exported import PkgKitFormat
@_exported import PkgKitChecking
@_exported import PkgKitReports
@_exported import PkgKitInstall
@_exported import PkgKitOperations
@_exported import PkgKitCatalog
@_exported import PkgKitPublish
@_exported import PkgKitTransport
@_exported import PkgKitSync
