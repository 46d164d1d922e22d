create table booking (seat varchar(64) not null);
