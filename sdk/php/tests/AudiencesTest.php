<?php

declare(strict_types=1);

namespace Gatepost\Tests;

use Gatepost\ImportReport;
use Gatepost\RefusedRow;

/** Audiences, contacts and the CSV import against a running Gatepost (docs/broadcasts.md). */
final class AudiencesTest extends LiveTestCase
{
    private const CSV = "email,name,plan\n"
        . "ann@example.com,Ann Again,pro\n" // a contact already: updated
        . "bob@example.com,Bob,free\n"
        . "not-an-address,Nobody,free\n" // row 4: refused on its own
        . "cid@example.com,,\n";

    public function testAnAudienceHoldsContactsPagedByCursorAndRefusesARepeat(): void
    {
        $audience = $this->live->createAudience('Newsletter');
        $this->assertStringStartsWith('aud_', $audience['id']);
        $this->assertSame(['Newsletter', 0], [$audience['name'], $audience['contacts']]);
        $this->assertContains($audience['id'], array_column($this->live->listAudiences(), 'id'));
        $emails = array_map(static fn (int $i): string => "reader$i@example.com", range(0, 4));
        foreach ($emails as $i => $email) {
            $this->assertStringStartsWith('con_', $this->live->addContact($audience['id'], $email, data: ['n' => $i])['id']);
        }
        $this->refusal(409, 'contact_exists', fn () => $this->live->addContact($audience['id'], 'READER0@example.com'));
        $first = $this->live->listContacts($audience['id'], 2);
        $this->assertCount(2, $first['data']);
        $this->assertNotNull($first['next_cursor']);
        // The generator follows next_cursor to the last page: every contact once.
        $seen = array_column(iterator_to_array($this->live->contacts($audience['id'], 2), false), 'email');
        sort($seen);
        $this->assertSame($emails, $seen);
        $this->assertSame(5, $this->live->getAudience($audience['id'])['contacts']);
        $this->live->deleteAudience($audience['id']);
        $this->refusal(404, 'not_found', fn () => $this->live->getAudience($audience['id']));
    }

    public function testAContactIsReadByIdOrEmailChangedAndRemoved(): void
    {
        $audience = $this->live->createAudience('Customers');
        $made = $this->live->addContact($audience['id'], 'Dee@Example.com', 'Dee', ['plan' => 'pro']);
        $this->assertSame(['dee@example.com', 'Dee', false], [$made['email'], $made['name'], $made['unsubscribed']]);
        $this->assertSame($made['id'], $this->live->getContact($audience['id'], 'dee@example.com')['id']);
        $changed = $this->live->updateContact($audience['id'], $made['id'], ['name' => null, 'unsubscribed' => true]);
        $this->assertSame([null, true, ['plan' => 'pro']], [$changed['name'], $changed['unsubscribed'], $changed['data']]);
        $this->live->removeContact($audience['id'], 'dee@example.com');
        $this->refusal(404, 'not_found', fn () => $this->live->getContact($audience['id'], $made['id']));
    }

    public function testACsvImportReportsAddedUpdatedAndRefusedRows(): void
    {
        $audience = $this->live->createAudience('Imported');
        $this->live->addContact($audience['id'], 'ann@example.com', 'Ann');
        $path = tempnam(sys_get_temp_dir(), 'gatepost-csv-');
        try {
            file_put_contents($path, self::CSV);
            $report = $this->live->importContactsFile($audience['id'], $path);
        } finally {
            unlink($path);
        }
        $this->assertEquals(new ImportReport(2, 1, 1, [new RefusedRow(4, 'not-an-address', 'not a valid email address')]), $report);
        $ann = $this->live->getContact($audience['id'], 'ann@example.com');
        $this->assertSame(['Ann Again', ['plan' => 'pro']], [$ann['name'], $ann['data']]);
        // The same rows again, as a string: every good row is a contact already.
        $again = $this->live->importContacts($audience['id'], self::CSV);
        $this->assertSame([0, 3, 1], [$again->added, $again->updated, $again->refusedCount]);
        // A stream that cannot seek (a pipe): sent once, chunked.
        $pipe = popen('printf "email\neve@example.com\n"', 'r');
        try {
            $piped = $this->live->importContacts($audience['id'], $pipe);
        } finally {
            pclose($pipe);
        }
        $this->assertSame([1, []], [$piped->added, $piped->refused]);
        $this->assertSame(4, $this->live->getAudience($audience['id'])['contacts']);
    }

    public function testAFileThatCannotBeReadIsRefusedWhole(): void
    {
        $audience = $this->live->createAudience('Broken');
        $e = $this->refusal(422, 'csv_invalid', fn () => $this->live->importContacts($audience['id'], "email,name\nann@example.com,\"never closed\n"));
        $this->assertNotEmpty($e->details);
        $this->assertSame([], $this->live->listContacts($audience['id'])['data']);
    }

    public function testATrackingHostIsNamedAtCreationThenChanged(): void
    {
        $name = self::unique('php-') . '.example';
        $made = $this->live->createDomain($name, "track.$name");
        $this->assertSame("track.$name", $made['tracking_host']);
        $tracking = array_values(array_filter($made['records'], static fn (array $r): bool => $r['purpose'] === 'tracking'));
        $this->assertSame(['CNAME'], array_column($tracking, 'type'));
        $this->refusal(422, 'tracking_host_invalid', fn () => $this->live->setTrackingHost($made['id'], 'track.elsewhere.example'));
        $cleared = $this->live->setTrackingHost($made['id'], null);
        $this->assertNull($cleared['tracking_host']);
        $this->assertNotContains('tracking', array_column($cleared['records'], 'purpose'));
        $this->live->deleteDomain($made['id']);
    }

    public function testFollowYieldsTheTimelineToItsEndAndTheFeedAnswersAfterACursor(): void
    {
        $start = $this->sandbox->listEvents();
        $this->assertSame([], $start['data']);
        $sent = $this->sandbox->send(['to' => 'feed@example.com', 'subject' => 'Feed', 'html' => '<p>f</p>']);
        $types = array_column(iterator_to_array($this->sandbox->follow($sent['id'], 50), false), 'type');
        $this->assertSame(['message.accepted', 'email.sent'], [$types[0], end($types)]);
        $cursor = $start['cursor'];
        $until = microtime(true) + 30;
        while (microtime(true) < $until) {
            $page = $this->sandbox->listEvents($cursor, 5);
            $cursor = $page['cursor'];
            foreach ($page['data'] as $event) {
                if (($event['data']['message_id'] ?? null) === $sent['id']) {
                    $this->assertSame('email.sent', $event['type']);
                    return;
                }
            }
        }
        $this->fail("The feed never had the send's event.");
    }
}
