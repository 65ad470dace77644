import Foundation

// What a patient's profile page reads, awaited (issue 56): their record, opened, and when a
// process last had an SMS gateway (whether a texted code would be sent). The page's other reads
// (the sessions, the phone, the calendar address) are the account's awaited reads already.

/// The awaited reads of a patient's profile a `ClinicStore` offers.
public protocol ProfileReadsStore: Sendable {
    /// One read: the patient, personal fields opened; nil for none.
    func client(id: Int64) async throws -> Client?
    /// One read: when a process last said it has an SMS gateway (`Outbox.noteTextGateway`), in
    /// whole seconds; nil: never.
    func textGatewaySeen() async throws -> Int64?
    /// One snapshot: `PersonalExportFacts` of the patient (the thread messages and the staff's
    /// names one statement each for all conversations).
    func exportFacts(clientId: Int64) async throws -> PersonalExportFacts
}
