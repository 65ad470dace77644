import ClinicKit
import CSQLite
import Foundation
import GRDB

/// SQLite's busy handler for one connection. SQLite's own busy timeout sleeps in steps of up to
/// 100 ms, which under contention left the lock idle most of the time (8 writers: 219
/// bookings/s). This retries after 50 to 250 microseconds, at random so that waiting processes
/// do not wake in step, until `SQLiteStore.busyLimit` has passed by the clock (sleeps overrun,
/// so counting them would wait longer); then SQLITE_BUSY surfaces and is reported as `busy`.
///
/// A connection is used by one thread at a time, and SQLite calls its handler on that thread,
/// so the start of a wait is kept per connection, in the handler's own context.
final class BusyWait {
    private var since: TimeInterval = 0

    /// Installs the handler on a new connection. Its context lives as long as the process (a
    /// few bytes per connection opened; GRDB offers no hook where a connection closes).
    static func install(on db: Database) {
        let context = Unmanaged.passRetained(BusyWait()).toOpaque()
        sqlite3_busy_handler(db.sqliteConnection, { context, retries in
            guard let context else { return 0 }
            return Unmanaged<BusyWait>.fromOpaque(context).takeUnretainedValue().retry(retries) ? 1 : 0
        }, context)
    }

    private func retry(_ retries: Int32) -> Bool {
        let now = ProcessInfo.processInfo.systemUptime
        if retries == 0 { since = now }
        usleep(UInt32.random(in: 50...250))
        return now - since < SQLiteStore.busyLimit
    }
}
