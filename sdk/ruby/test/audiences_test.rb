# frozen_string_literal: true

# Audiences, contacts and the CSV import against a real Gatepost (docs/broadcasts.md).
require_relative "test_helper"
require "pathname"
require "stringio"
require "tmpdir"

class AudiencesTest < Minitest::Test
  include GatepostTest

  CSV = <<~CSV
    email,name,plan
    ann@example.com,Ann Again,pro
    bob@example.com,Bob,free
    not-an-address,Nobody,free
    cid@example.com,,
  CSV

  def test_an_audience_holds_contacts_paged_by_cursor_and_refuses_a_repeat
    audience = live.create_audience("Newsletter")
    assert_match(/\Aaud_/, audience["id"])
    assert_equal ["Newsletter", 0], audience.values_at("name", "contacts")
    assert_includes live.list_audiences.map { |a| a["id"] }, audience["id"]
    emails = (0..4).map { |i| "reader#{i}@example.com" }
    emails.each do |email|
      made = live.add_contact(audience["id"], email: email, data: { n: email[6] })
      assert_match(/\Acon_/, made["id"])
    end
    repeat = assert_raises(Gatepost::ConflictError) { live.add_contact(audience["id"], email: "READER0@example.com") }
    assert_equal [409, "contact_exists"], [repeat.status, repeat.code]
    first = live.list_contacts(audience["id"], limit: 2)
    assert_equal 2, first["data"].size
    refute_nil first["next_cursor"]
    # The enumerator follows next_cursor to the last page: every contact once.
    assert_equal emails, live.each_contact(audience["id"], page_size: 2).map { |c| c["email"] }.sort
    assert_equal 5, live.get_audience(audience["id"])["contacts"]
    live.delete_audience(audience["id"])
    assert_equal "not_found", assert_raises(Gatepost::NotFoundError) { live.get_audience(audience["id"]) }.code
  end

  def test_a_contact_is_read_by_id_or_email_changed_and_removed
    audience = live.create_audience("Customers")
    made = live.add_contact(audience["id"], email: "Dee@Example.com", name: "Dee", data: { plan: "pro" })
    assert_equal ["dee@example.com", "Dee", false], made.values_at("email", "name", "unsubscribed")
    assert_equal made["id"], live.get_contact(audience["id"], "dee@example.com")["id"]
    changed = live.update_contact(audience["id"], made["id"], { name: nil, unsubscribed: true })
    assert_equal [nil, true, { "plan" => "pro" }], changed.values_at("name", "unsubscribed", "data")
    live.remove_contact(audience["id"], "dee@example.com")
    assert_raises(Gatepost::NotFoundError) { live.get_contact(audience["id"], made["id"]) }
  end

  def test_a_csv_import_reports_added_updated_and_refused_rows
    audience = live.create_audience("Imported")
    live.add_contact(audience["id"], email: "ann@example.com", name: "Ann")
    report = Dir.mktmpdir do |dir|
      path = Pathname(dir).join("contacts.csv")
      path.write(CSV)
      live.import_contacts(audience["id"], path)
    end
    assert_equal [2, 1, 1], [report.added, report.updated, report.refused_count]
    assert_equal [[4, "not-an-address"]], report.refused.map { |r| [r.row, r.email] }
    assert_equal ["Ann Again", { "plan" => "pro" }], live.get_contact(audience["id"], "ann@example.com").values_at("name", "data")
    # The same rows again, as a String: every good row is a contact already.
    again = live.import_contacts(audience["id"], CSV)
    assert_equal [0, 3, 1], [again.added, again.updated, again.refused_count]
    # A pipe: sent once, chunked.
    reader, writer = IO.pipe
    writer.write("email\neve@example.com\n")
    writer.close
    assert_equal [1, []], live.import_contacts(audience["id"], reader).then { |r| [r.added, r.refused] }
    assert_equal 4, live.get_audience(audience["id"])["contacts"]
  end

  def test_a_file_that_cannot_be_read_is_refused_whole
    audience = live.create_audience("Broken")
    refused = assert_raises(Gatepost::UnprocessableError) do
      live.import_contacts(audience["id"], StringIO.new(%(email,name\nann@example.com,"never closed\n)))
    end
    assert_equal "csv_invalid", refused.code
    refute_empty refused.details
    assert_empty live.list_contacts(audience["id"])["data"]
  end
end
