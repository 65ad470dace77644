import Foundation
import Testing
@testable import ClinicKit

/// The observer of appointment changes is read once per change, for the life of a server.
@Suite(.storeFree) struct AppointmentChangesTests {
    /// Reading the observer must not change it: read back through `inout`, a stored closure
    /// gained a reabstraction thunk per read, so a server's every booking was slower than the
    /// last until the stack overflowed (about 130,000 changes). 200,000 changes here are told
    /// once each, and the last as quickly as the first (a regression crashes or never ends).
    @Test func theObserverIsToldOfEveryChangeAndStaysTheSame() throws {
        let changes = AppointmentChanges()
        let told = LockedBox<[String: Int]>([:])
        changes.observe { operation, outcome in told.withLock { $0[operation + " " + outcome, default: 0] += 1 } }
        for index in 0..<200_000 {
            if index % 1000 == 999 {
                #expect(throws: ClinicError.self) { try changes.count("book") { throw ClinicError(.slotTaken, .slotTaken) } }
            } else {
                _ = try changes.count("book") { index }
            }
        }
        #expect(told.current == ["book ok": 199_800, "book slot_taken": 200])
    }
}
