import Foundation

/// What comes back from the phone network (issue 45): a patient's reply, and the gateway's
/// delivery reports. A reply is matched to its patient by their confirmed number only (an
/// unknown number is refused, nothing changed), and answered once:
/// - STOP (and STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, СТОП): texts off, answered once (a
///   second STOP gets no answer); START (UNSTOP, СТАРТ) turns them back on;
/// - C or X: confirms or cancels the patient's next appointment, within the next two days,
///   through the same rules as every front (a cancellation frees the time for the waitlist in
///   the same transaction); with two or more, the answer lists them and C1, X2 … say which.
/// A patient who replied STOP gets no answer to anything but START.
public final class TextController: Sendable {
    let database: any ClinicStore
    let appointments: AppointmentController
    let now: @Sendable () -> Date

    /// How far ahead a C or X looks for the appointment it answers.
    static let replyHorizon: Int64 = 48 * 3600

    init(database: any ClinicStore, appointments: AppointmentController, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.appointments = appointments
        self.now = now
    }

    public enum Command: Equatable, Sendable {
        case stop, start, confirm(Int?), cancel(Int?), unknown

        /// Whether it is a C (confirm).
        var confirms: Bool {
            if case .confirm = self { return true }
            return false
        }
    }

    static let stopWords: Set<String> = ["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "СТОП", "ОТПИСАТЬСЯ"]
    static let startWords: Set<String> = ["START", "UNSTOP", "СТАРТ"]

    /// What a reply asks. STOP and START are read leniently (the first word, punctuation
    /// dropped: an opt-out must never be missed). C and X change an appointment, so they are
    /// read strictly: exactly `C`, `X`, `C<n>` or `X<n>` (n 1–99; Cyrillic С and Х too), with
    /// spaces around or between and nothing else: "X?", "X.", "X-1" or "Xmas" are `unknown`.
    public static func command(_ text: String) -> Command {
        let upper = text.uppercased()
        let word = String(upper.filter { $0.isLetter || $0.isNumber || $0 == " " }).trimmingCharacters(in: .whitespaces)
        let first = word.split(separator: " ").first.map(String.init) ?? ""
        if stopWords.contains(first.replacingOccurrences(of: "C", with: "С")) || stopWords.contains(first) { return .stop }
        if startWords.contains(first.replacingOccurrences(of: "C", with: "С")) || startWords.contains(first) { return .start }
        // Cyrillic С and Х look like C and X on a phone's keyboard.
        let compact = String(upper.map { $0 == "С" ? "C" : $0 == "Х" ? "X" : $0 }.filter { !$0.isWhitespace })
        guard let letter = compact.first, letter == "C" || letter == "X" else { return .unknown }
        let rest = compact.dropFirst()
        let index: Int?
        if rest.isEmpty { index = nil } else {
            guard rest.count <= 2, rest.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(rest), number >= 1 else {
                return .unknown
            }
            index = number
        }
        return letter == "C" ? .confirm(index) : .cancel(index)
    }

    /// The number an incoming text came from, as the gateway gives it ("+12025550143",
    /// "12025550143", "0012025550143"), in E.164; nil when it is no phone number.
    static func sender(_ text: String) -> String? {
        var digits = text.filter { !" -.()".contains($0) }
        if digits.hasPrefix("+") { digits.removeFirst() } else if digits.hasPrefix("00") { digits.removeFirst(2) }
        guard (8...15).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits.first != "0" else { return nil }
        return "+" + digits
    }

    /// What a reply changed of the patient's consent, for the operator's metrics.
    public enum ConsentChange: Sendable, Equatable { case optedOut, optedIn }

    /// Handles a text from `from`; returns the answer to text back (nil: none).
    public func receive(from: String, text: String) throws -> String? { try handle(from: from, text: text).reply }

    /// Handles a text from `from`: the answer to text back (nil: none) and the change of consent
    /// it made (nil: none). Refused (`not_found`, nothing changed) when no patient confirmed
    /// that number.
    public func handle(from: String, text: String) throws -> (reply: String?, consent: ConsentChange?) {
        let now = self.now()
        guard let number = Self.sender(from) else { throw ClinicError(.notFound, .textUnknownNumber) }
        guard let sender = try database.reading({ tx in try ReplySender.read(tx, store: database, number: number) }) else {
            throw ClinicError(.notFound, .textUnknownNumber)
        }
        let (phone, language) = (sender.phone, sender.language)
        let command = Self.command(text)
        switch command {
        case .stop, .start:
            let changed = try database.writing { tx in
                try ClientChangeFacts.change(tx, store: database, id: phone.clientId, phone: true) { facts in
                    Self.consenting(facts, stopping: command == .stop, now: now)
                }
            }
            return Self.consentAnswer(changed, stopping: command == .stop, language)
        case .confirm(let index), .cancel(let index):
            guard !phone.stopped else { return (nil, nil) }
            let soon = try database.reading { tx in
                try Self.soon(try tx.storedAppointments(ofClient: phone.clientId), now: now) { try tx.clinic(id: $0)?.zone }
            }
            guard let chosen = try Self.chosen(index: index, soon: soon, language: language) else {
                return (Self.unchosen(soon: soon, language: language), nil)
            }
            var failure: (any Error)?
            do {
                _ = command.confirms ? try appointments.confirmAppointment(chosen.id, clientId: phone.clientId)
                    : try appointments.cancelAppointment(chosen.id, clientId: phone.clientId)
            } catch { failure = error }
            return (try Self.replied(confirms: command.confirms, chosen, failure: failure, language), nil)
        case .unknown:
            return (phone.stopped ? nil : Strings.text(.textNotUnderstood, language), nil)
        }
    }

    /// `handle` awaited (issue 56: the sender by `PhoneNetworkStore.replySender`, texts off or on
    /// by `ClientChangesStore.changeClient`, the appointments read and changed as the patient's
    /// own awaited reads and changes).
    public func handle(from: String, text: String) async throws -> (reply: String?, consent: ConsentChange?) {
        let now = self.now()
        guard let number = Self.sender(from), let sender = try await database.replySender(number: number) else {
            throw ClinicError(.notFound, .textUnknownNumber)
        }
        let (phone, language) = (sender.phone, sender.language)
        let command = Self.command(text)
        switch command {
        case .stop, .start:
            let stopping = command == .stop
            let changed = try await database.changeClient(id: phone.clientId, phone: true) { facts in
                Self.consenting(facts, stopping: stopping, now: now)
            }
            return Self.consentAnswer(changed, stopping: stopping, language)
        case .confirm(let index), .cancel(let index):
            guard !phone.stopped else { return (nil, nil) }
            let list = try await appointments.getAppointmentsByClientId(phone.clientId, scope: .upcoming)
            let clinics = try await database.searchedClinics(ids: Array(Set(list.map { (appointment: Appointment) in appointment.clinicId })))
            var zones: [Int64: TimeZone] = [:]
            for clinic in clinics { if let id = clinic.id { zones[id] = clinic.zone } }
            let soon = try Self.soon(list, now: now) { zones[$0] }
            guard let chosen = try Self.chosen(index: index, soon: soon, language: language) else {
                return (Self.unchosen(soon: soon, language: language), nil)
            }
            var failure: (any Error)?
            do {
                _ = command.confirms ? try await appointments.confirm(chosen.id, clientId: phone.clientId)
                    : try await appointments.cancel(chosen.id, clientId: phone.clientId)
            } catch { failure = error }
            return (try Self.replied(confirms: command.confirms, chosen, failure: failure, language), nil)
        case .unknown:
            return (phone.stopped ? nil : Strings.text(.textNotUnderstood, language), nil)
        }
    }

    /// STOP or START decided on the patient's record: only a confirmed phone whose texts are
    /// not already so changes (texts off: what was waiting to go by text goes too).
    static func consenting(_ facts: ClientChangeFacts?, stopping: Bool, now: Date) -> ClientChange<Bool> {
        guard var current = facts?.phone, current.confirmed, current.stopped != stopping else {
            return ClientChange(writes: [], result: false)
        }
        current.stopped = stopping
        // Nothing more goes after a STOP, even what was waiting.
        return ClientChange(writes: [.savePhone(current, at: now)] + (stopping ? [.dropPendingDeliveries([.text])] : []), result: true)
    }

    /// A STOP or START answered once: a second one gets no answer.
    static func consentAnswer(_ changed: Bool, stopping: Bool, _ language: Language) -> (reply: String?, consent: ConsentChange?) {
        guard changed else { return (nil, nil) }
        return (Strings.text(stopping ? .textStopped : .textStarted, language), stopping ? .optedOut : .optedIn)
    }

    /// An appointment a C or X may answer, with its time as the answer says it.
    struct Soon { let id: Int64; let when: String }

    /// The patient's appointments a C or X may answer: changeable, starting within
    /// `replyHorizon`, soonest first; `zone` gives a clinic's zone (UTC for none).
    static func soon(_ list: [Appointment], now: Date, zone: (Int64) throws -> TimeZone?) throws -> [(Appointment, TimeZone)] {
        try list.filter {
            $0.status.isPatientChangeable && $0.startsAt > now && $0.startsAt.seconds <= now.seconds + replyHorizon
        }.sorted { $0.startsAt < $1.startsAt }.map { ($0, try zone($0.clinicId) ?? TimeZone(identifier: "UTC") ?? .current) }
    }

    /// The appointment a C or X (C2, X1 …) answers; nil: none, or which one is not said.
    static func chosen(index: Int?, soon: [(Appointment, TimeZone)], language: Language) throws -> Soon? {
        let chosen: (Appointment, TimeZone)
        if let index {
            guard index <= soon.count else { return nil }
            chosen = soon[index - 1]
        } else {
            guard soon.count == 1 else { return nil }
            chosen = soon[0]
        }
        guard let id = chosen.0.id else { return nil }
        return Soon(id: id, when: DateText.dateTimeWithZone(chosen.0.startsAt, timeZone: chosen.1, language: language))
    }

    /// The answer when no appointment is chosen: none due, or the list to choose from.
    static func unchosen(soon: [(Appointment, TimeZone)], language: Language) -> String {
        guard !soon.isEmpty else { return Strings.text(.textNothingDue, language) }
        return which(soon.map { DateText.dateTimeWithZone($0.0.startsAt, timeZone: $0.1, language: language) }, language)
    }

    /// The answer to a C or X once its change was tried (`failure`: its refusal, nil: made): a
    /// cancellation too late, or of a visit under way, is said so; any other refusal is thrown.
    static func replied(confirms: Bool, _ chosen: Soon, failure: (any Error)?, _ language: Language) throws -> String {
        if let failure {
            guard !confirms, let refusal = failure as? ClinicError, refusal.code == .tooLate || refusal.code == .invalidTransition else {
                throw failure
            }
            return Strings.text(.textCannotCancel, language, [chosen.when])
        }
        return Strings.text(confirms ? .textConfirmed : .textCancelled, language, [chosen.when])
    }

    static func which(_ times: [String], _ language: Language) -> String {
        if times.count == 1 { return Strings.text(.textWhichOne, language, [times[0]]) }
        return Strings.text(.textWhich, language, [String(times.count),
                                            times.enumerated().map { "\($0.offset + 1)) \($0.element)" }.joined(separator: "; ")])
    }

    /// A delivery report from the gateway: Kannel's status (1 delivered, 2 failed, 4 buffered,
    /// 8 taken by the operator, 16 refused by the operator) recorded on the delivery.
    @discardableResult
    public func report(deliveryId: Int64, status: Int) throws -> TextReport {
        let report = try Self.reportOf(status: status), now = self.now()
        guard try database.writing({ tx in try tx.recordTextReport(report, ofDelivery: deliveryId, at: now) }) else {
            throw ClinicError(.notFound, .textReportUnknown)
        }
        return report
    }

    /// `report` awaited (issue 56: `PhoneNetworkStore.recordReport`, one statement).
    @discardableResult
    public func report(deliveryId: Int64, status: Int) async throws -> TextReport {
        let report = try Self.reportOf(status: status)
        guard try await database.recordReport(report, ofDelivery: deliveryId, at: now()) else {
            throw ClinicError(.notFound, .textReportUnknown)
        }
        return report
    }

    /// Kannel's status as a report; another is `invalid_input` (nothing recorded).
    static func reportOf(status: Int) throws -> TextReport {
        switch status {
        case 1: .delivered
        case 2: .failed
        case 4: .buffered
        case 8: .accepted
        case 16: .rejected
        default: throw ClinicError.invalid(.textReportUnknown)
        }
    }

    /// Makes every number's lookup key again under `cipher` (the personal-data key was rotated).
    package static func rekeyPhones(_ tx: any StoreWriting, cipher: FieldCipher) throws {
        for clientId in try tx.phoneClients() {
            guard var phone = try tx.phone(ofClient: clientId) else { continue }
            phone.numberKey = Texts.numberKey(try Texts.number(phone, cipher: cipher), cipher: cipher)
            try tx.savePhone(phone, at: Date())
        }
    }
}
