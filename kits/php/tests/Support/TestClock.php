<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests\Support;

/** A clock the test moves, shown in a time zone that is not UTC. */
final class TestClock
{
    private \DateTimeImmutable $now;

    /**
     * By default 00:30:00.25 UTC on the day summer time ends in Spain:
     * 02:30 in Madrid, a wall-clock time that the next hour repeats.
     */
    public function __construct(string $utc = '2026-10-25 00:30:00.250000', private readonly string $zone = 'Europe/Madrid')
    {
        $this->now = (new \DateTimeImmutable($utc, new \DateTimeZone('UTC')))->setTimezone(new \DateTimeZone($zone));
    }

    public function now(): \DateTimeImmutable
    {
        return $this->now;
    }

    public function unix(): int
    {
        return $this->now->getTimestamp();
    }

    /** Moves the clock by elapsed seconds (counted in UTC, so that no daylight-saving rule applies). */
    public function add(int $seconds): void
    {
        $this->now = $this->now->setTimezone(new \DateTimeZone('UTC'))
            ->modify(sprintf('%+d seconds', $seconds))
            ->setTimezone(new \DateTimeZone($this->zone));
    }
}
