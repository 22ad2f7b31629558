-- The W3C traceparent of the span that registered the event, when tracing
-- was on and sampled it: the delivery engine links each attempt's span to
-- it, so that an operator follows one event from the platform's request to
-- its attempts. NULL otherwise (tracing off, or not sampled). It is the
-- platform's trace id: it is never sent to customers' receivers.
ALTER TABLE events ADD COLUMN traceparent text;
